"""Memory stores attached to a conversation (a session's `resources[]`, spec 004).

The table keeps the name it was created with in `conversations`.
"""

from __future__ import annotations

from django.db import models

MAX_ATTACHED_STORES = 8
MAX_INSTRUCTIONS_CHARS = 4096


class AccessMode(models.TextChoices):
    READ_WRITE = "read_write"
    READ_ONLY = "read_only"


class ConversationResource(models.Model):
    """A memory store attached to a conversation (a session's `resources[]`)."""

    conversation = models.ForeignKey("conversations.Conversation", on_delete=models.CASCADE, related_name="resources")
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
        db_table = "conversations_conversationresource"
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "memory_store"], name="uniq_conversation_store"),
        ]

    def __str__(self) -> str:
        return f"{self.memory_store_id} ({self.access})"
