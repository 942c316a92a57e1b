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

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="conversations")
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
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="branches")
    name = models.CharField(max_length=128, default=MAIN_BRANCH)
    parent = models.ForeignKey("self", on_delete=models.CASCADE, null=True, blank=True, related_name="children")
    fork_message_id = models.CharField(max_length=40, null=True, blank=True)
    fork_floor_no = models.PositiveIntegerField(null=True, blank=True)
    # Floor numbers are handed out from this counter and never reused, so a
    # cursor (a floor number) stays meaningful after deletes and clears.
    next_floor_no = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["conversation", "name"], name="uniq_branch_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Message(models.Model):
    """One floor of a branch."""

    id = models.CharField(primary_key=True, max_length=40, default=new_message_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    branch = models.ForeignKey(Branch, on_delete=models.CASCADE, related_name="messages")
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
        indexes = [models.Index(fields=["conversation", "created_at"], name="msg_conv_created")]

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
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "memory_store"], name="uniq_conversation_store"),
        ]
