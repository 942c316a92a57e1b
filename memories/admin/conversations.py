"""The conversation page with the memories derived from each floor beside it:
the conversations app's admin, extended here (memories knows what was made
from which floor; conversations knows nothing of memories)."""

from __future__ import annotations

from django.apps import apps
from django.contrib import admin

from conversations.admin import ConversationAdmin
from memories.admin.derived import memories_for_floors

# The conversations app's model by its label: memories reads conversations
# through its selectors, and needs the model here only to register it again.
Conversation = apps.get_model("conversations", "Conversation")
admin.site.unregister(Conversation)


@admin.register(Conversation)
class ConversationWithMemoriesAdmin(ConversationAdmin):
    def floor_memories(self, *, conversation, messages, branch_names):
        return memories_for_floors(workspace_id=conversation.workspace_id, conversation=conversation,
                                   messages=messages, branch_names=branch_names)
