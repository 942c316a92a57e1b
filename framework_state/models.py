"""What the framework adapters of `memory_client` persist beside a session's
messages: Claude Agent SDK session keys and transcript entries, LangGraph
checkpoints and pending writes, and the TTL of LangGraph store items (which
are memory-store documents). A framework session is a conversation
(`Conversation.source` names the framework).

The tables keep the names they were created with in `conversations`.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from accounts.models import Workspace
from conversations.models import Conversation, Message


class AgentSession(models.Model):
    """A Claude Agent SDK session key `(project_key, session_id)` and its conversation.

    `mtime_ms` is the storage write time of the main transcript (epoch ms, the
    clock `list_sessions` reports); `summary` is the SDK's opaque summary sidecar,
    replaced under `summary_version` so concurrent read-fold-writes cannot lose
    an update.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    conversation = models.OneToOneField(Conversation, on_delete=models.CASCADE, related_name="agent_session")
    project_key = models.CharField(max_length=1024)
    session_id = models.CharField(max_length=256)
    mtime_ms = models.BigIntegerField(default=0)
    summary = models.JSONField(null=True, blank=True)
    summary_mtime_ms = models.BigIntegerField(null=True, blank=True)
    summary_version = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "conversations_agentsession"
        constraints = [
            models.UniqueConstraint(fields=["workspace", "project_key", "session_id"], name="uniq_agent_session_key"),
        ]
        indexes = [models.Index(fields=["workspace", "project_key", "mtime_ms"], name="agent_session_project")]

    def __str__(self) -> str:
        return f"{self.project_key}/{self.session_id}"


class SessionEntry(models.Model):
    """One transcript line of a Claude Agent SDK session, kept verbatim.

    `subpath` is "" for the main transcript. `uuid` is the SDK's idempotency
    key: a repeated uuid in the same stream is ignored. Order is the primary key.
    """

    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="entries")
    subpath = models.CharField(max_length=512, blank=True, default="")
    uuid = models.CharField(max_length=128, null=True, blank=True)
    # The line as JSON text: kept verbatim, and a text column accepts what
    # PostgreSQL's jsonb refuses (an escaped NUL inside a tool's output).
    entry = models.TextField()
    # The conversation message this entry shows up as (user / assistant lines
    # of the main transcript), if any. The line is the same text: deleting the
    # message erases it too, or the transcript would keep what was erased.
    message = models.ForeignKey(Message, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    mtime_ms = models.BigIntegerField(default=0)

    class Meta:
        db_table = "conversations_sessionentry"
        constraints = [
            models.UniqueConstraint(
                fields=["session", "subpath", "uuid"],
                condition=Q(uuid__isnull=False),
                name="uniq_session_entry_uuid",
            ),
        ]
        indexes = [models.Index(fields=["session", "subpath", "id"], name="session_entry_stream")]

    def __str__(self) -> str:
        return f"entry {self.pk} of {self.session_id}{'/' + self.subpath if self.subpath else ''}"


class Checkpoint(models.Model):
    """A LangGraph checkpoint of a thread (the thread is a conversation).

    The checkpoint is stored as the saver's serializer wrote it: `type` plus
    the raw bytes, so any serializer (msgpack, JSON, encrypted) round-trips.
    """

    # No index of their own: the indexes below lead with each (every put
    # maintained two more, and PostgreSQL a third for LIKE on the workspace).
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="checkpoints",
                                     db_index=False)
    checkpoint_ns = models.CharField(max_length=512, blank=True, default="")
    checkpoint_id = models.CharField(max_length=64)
    parent_checkpoint_id = models.CharField(max_length=64, null=True, blank=True)
    type = models.CharField(max_length=64)
    checkpoint = models.BinaryField()
    metadata = models.JSONField(default=dict, blank=True)
    run_id = models.CharField(max_length=128, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "conversations_checkpoint"
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "checkpoint_ns", "checkpoint_id"], name="uniq_checkpoint"
            ),
        ]
        indexes = [
            models.Index(fields=["workspace", "checkpoint_id"], name="checkpoint_ws_id"),
            models.Index(fields=["workspace", "run_id"], name="checkpoint_ws_run"),
        ]

    def __str__(self) -> str:
        return f"checkpoint {self.checkpoint_id}"


class CheckpointWrite(models.Model):
    """A pending write of a LangGraph task against a checkpoint."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    # Found through the unique index, which leads with it.
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="checkpoint_writes",
                                     db_index=False)
    checkpoint_ns = models.CharField(max_length=512, blank=True, default="")
    checkpoint_id = models.CharField(max_length=64)
    task_id = models.CharField(max_length=128)
    task_path = models.CharField(max_length=1024, blank=True, default="")
    idx = models.IntegerField()
    channel = models.CharField(max_length=256)
    type = models.CharField(max_length=64)
    value = models.BinaryField()

    class Meta:
        db_table = "conversations_checkpointwrite"
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "checkpoint_ns", "checkpoint_id", "task_id", "idx"],
                name="uniq_checkpoint_write",
            ),
        ]

    def __str__(self) -> str:
        return f"write {self.task_id}[{self.idx}] of {self.checkpoint_id}"


class StoreDocumentTTL(models.Model):
    """The time-to-live of a LangGraph store item (a memory-store document).

    The expiry itself is `MemoryItem.expires_at` (reads skip expired items and
    the maintenance sweep deletes them); the TTL is kept to push the expiry
    forward when a read refreshes it.
    """

    memory = models.OneToOneField(
        "memories.MemoryItem", on_delete=models.CASCADE, primary_key=True, related_name="langgraph_ttl"
    )
    ttl_minutes = models.FloatField()

    class Meta:
        db_table = "conversations_storedocumentttl"

    def __str__(self) -> str:
        return f"ttl of {self.memory_id}: {self.ttl_minutes} min"
