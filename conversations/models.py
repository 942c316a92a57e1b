from __future__ import annotations

from django.db import models
from django.db.models import Q

from accounts.models import Workspace
from memory_project.ids import new_branch_id, new_message_id

MAX_CONVERSATION_ID_BYTES = 256
MAX_MESSAGES_PER_CONVERSATION = 10_000
MAX_CONTENT_BYTES = 50 * 1024 * 1024
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


# A framework session is a conversation (`Conversation.source` names the
# framework); what the framework persists beside its messages lives in
# `framework_state`.


class FrameworkSource(models.TextChoices):
    CLAUDE_AGENT_SDK = "claude_agent_sdk"
    OPENAI_AGENTS = "openai_agents"
    LANGGRAPH = "langgraph"
