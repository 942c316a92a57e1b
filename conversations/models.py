from __future__ import annotations

from django.db import models
from django.db.models import Q

from accounts.models import Workspace
from memory_project.ids import new_branch_id, new_message_id

MAX_CONVERSATION_ID_BYTES = 256
MAX_MESSAGES_PER_CONVERSATION = 10_000
MAX_CONTENT_BYTES = 50 * 1024 * 1024
MAX_ATTACHED_STORES = 8
MAX_INSTRUCTIONS_CHARS = 4096
MAIN_BRANCH = "main"


class Role(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class Conversation(models.Model):
    """A conversation, addressed by the caller's business id (`external_id`)."""

    # No index of its own: every index below starts with the workspace.
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="conversations", db_index=False)
    external_id = models.CharField(max_length=256)
    user_id = models.CharField(max_length=256, null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_message_at = models.DateTimeField(null=True, blank=True)
    message_count = models.PositiveIntegerField(default=0)
    # Where the conversation came from: the REST API or a framework adapter
    # ("claude_agent_sdk", "openai_agents", "langgraph").
    source = models.CharField(max_length=40, default="api")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "external_id"], name="uniq_conversation_external_id"),
        ]
        indexes = [
            # Lists order by (last_message_at, id); the id makes the cursor total.
            models.Index(fields=["workspace", "last_message_at", "id"], name="conv_ws_last_msg"),
            models.Index(fields=["workspace", "user_id", "last_message_at", "id"], name="conv_ws_user_last_msg"),
        ]

    def __str__(self) -> str:
        return self.external_id


class Branch(models.Model):
    """A line of messages. `main` starts the conversation; a fork reads its
    parent's messages up to `fork_floor_no`, then its own."""

    id = models.CharField(primary_key=True, max_length=40, default=new_branch_id, editable=False)
    # No index of its own: `uniq_branch_name` (conversation, name) serves
    # every lookup by conversation, and a conversation's creation writes one
    # index fewer.
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="branches", db_index=False)
    name = models.CharField(max_length=128, default=MAIN_BRANCH)
    parent = models.ForeignKey("self", on_delete=models.CASCADE, null=True, blank=True, related_name="children")
    fork_message_id = models.CharField(max_length=40, null=True, blank=True)
    fork_floor_no = models.PositiveIntegerField(null=True, blank=True)
    # Floor numbers are handed out from this counter and never reused, so a
    # cursor (a floor number) stays meaningful after deletes and clears.
    next_floor_no = models.PositiveIntegerField(default=1)
    # What the memory pipeline still has to read is derived from counters, so
    # an append writes nothing outside its own transaction: floors
    # `processed_floor_no + 1 .. next_floor_no - 1` and `appended_tokens -
    # processed_tokens` tokens are pending. The tokens are those of the
    # branch's own messages; a fork starts with `processed_floor_no` at its
    # fork floor, since the floors it inherits were appended to its parent.
    # The pipeline moves the processed counters through
    # `services.branch_mark_processed`.
    appended_tokens = models.PositiveBigIntegerField(default=0)
    processed_floor_no = models.PositiveIntegerField(default=0)
    processed_tokens = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "branches"
        constraints = [
            models.UniqueConstraint(fields=["conversation", "name"], name="uniq_branch_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Message(models.Model):
    """One floor of a branch."""

    id = models.CharField(primary_key=True, max_length=40, default=new_message_id, editable=False)
    # Every index costs each append: the foreign keys have none of their own
    # where an index of Meta starts with the column (and none with the
    # `varchar_pattern_ops` twin PostgreSQL gets for a text key, which only
    # LIKE would use).
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages", db_index=False)
    branch = models.ForeignKey(Branch, on_delete=models.CASCADE, related_name="messages", db_index=False)
    floor_no = models.PositiveIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.JSONField()
    metadata = models.JSONField(default=dict, blank=True)
    content_size_bytes = models.PositiveBigIntegerField(default=0)
    token_estimate = models.PositiveIntegerField(default=0)
    idempotency_key = models.CharField(max_length=255, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["branch", "floor_no"], name="uniq_message_floor"),
            models.UniqueConstraint(
                fields=["workspace", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="uniq_message_idempotency_key",
            ),
        ]
        indexes = [
            models.Index(fields=["conversation", "created_at"], name="msg_conv_created"),
            # A workspace's deletion finds its messages by this.
            models.Index(fields=["workspace"], name="msg_workspace"),
            # Context assembly puts a branch's system messages first, wherever
            # they were stored: found without scanning the branch's other
            # floors, and free for every append that is not a system message.
            models.Index(fields=["branch", "floor_no"], name="msg_system_floor", condition=Q(role="system")),
        ]

    def __str__(self) -> str:
        return self.id


class AccessMode(models.TextChoices):
    READ_WRITE = "read_write"
    READ_ONLY = "read_only"


class ConversationResource(models.Model):
    """A memory store attached to a conversation (a session's `resources[]`)."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="resources")
    memory_store = models.ForeignKey("memories.MemoryStore", on_delete=models.CASCADE, related_name="attachments")
    access = models.CharField(max_length=16, choices=AccessMode.choices, default=AccessMode.READ_WRITE)
    instructions = models.TextField(blank=True, default="")
    position = models.PositiveSmallIntegerField(default=0)
    # Snapshots taken when the store is attached: what the agent is told the
    # store is and where it is mounted stay stable for the conversation even if
    # the store is renamed later.
    store_name = models.CharField(max_length=255, blank=True, default="")
    store_description = models.CharField(max_length=1024, blank=True, default="")
    mount_path = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "memory_store"], name="uniq_conversation_store"),
        ]

    def __str__(self) -> str:
        return f"{self.memory_store_id} ({self.access})"


# --- Framework session state ------------------------------------------------------
# The tables the framework adapters of `memory_client` need. A framework session
# is a conversation (`Conversation.source` names the framework); these rows hold
# what the framework persists beside its messages.


class FrameworkSource(models.TextChoices):
    CLAUDE_AGENT_SDK = "claude_agent_sdk"
    OPENAI_AGENTS = "openai_agents"
    LANGGRAPH = "langgraph"


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

    def __str__(self) -> str:
        return f"ttl of {self.memory_id}: {self.ttl_minutes} min"
