"""The conversation page with the memories derived from each floor beside it:
the conversations app's admin, extended here (memories knows what was made
from which floor; conversations knows nothing of memories)."""

from __future__ import annotations

from django.apps import apps
from django.contrib import admin

from conversations.admin import ConversationAdmin
from memories.admin.derived import memories_for_floors
from memories.admin.visibility import approved_only as reads_approved_only

# The conversations app's model by its label: memories reads conversations
# through its selectors, and needs the model here only to register it again.
Conversation = apps.get_model("conversations", "Conversation")

admin.site.unregister(Conversation)


@admin.register(Conversation)
class ConversationWithMemoriesAdmin(ConversationAdmin):
    def floor_memories(self, request, *, conversation, messages, branch_names):
        # In a workspace that requires review, what was never approved is
        # shown only to those who review it (the review queue's permission).
        approved_only = reads_approved_only(request, conversation.workspace)
        return memories_for_floors(workspace_id=conversation.workspace_id, conversation=conversation,
                                   messages=messages, branch_names=branch_names, approved_only=approved_only)
