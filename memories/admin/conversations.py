"""The conversation page with the memories derived from each floor beside it:
the conversations app's admin, extended here (memories knows what was made
from which floor; conversations knows nothing of memories)."""

from __future__ import annotations

from django.contrib import admin

from conversations.admin import ConversationAdmin
from conversations.models import Conversation
from memories.admin.derived import memories_for_floors

admin.site.unregister(Conversation)


@admin.register(Conversation)
class ConversationWithMemoriesAdmin(ConversationAdmin):
    def floor_memories(self, *, conversation, messages, branch_names):
        return memories_for_floors(workspace_id=conversation.workspace_id, conversation=conversation,
                                   messages=messages, branch_names=branch_names)
