"""Conversations in the review console: read-only (agents write them through
the API). A conversation's page shows a branch's floors in order, a page at a
time, each beside the memories derived from it, and the rolling summary."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.contrib import admin
from django.db.models import Q
from django.utils.html import format_html

from accounts.admin_scope import WorkspaceScopedAdmin
from conversations.models import Branch, Conversation, Message
from conversations.selectors.branches import branch_list, branch_view
from conversations.selectors.messages import branch_messages
from conversations.selectors.references import message_places

FLOORS_PER_PAGE = 100
# A message may hold up to 50 MB; the page shows the head of each.
MAX_SHOWN_CHARS = 4000


def floor_anchor(message: Message) -> str:
    """The id of a floor's row on the conversation page (links land on it)."""
    return f"floor-{message.branch_id}-{message.floor_no}"


def message_text(content: Any) -> str:
    """A message's content as readable text: strings as they are, content
    blocks by their text, anything else as JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                parts.append(json.dumps(block, ensure_ascii=False))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, indent=2)


@dataclass
class FloorRow:
    message: Message
    anchor: str
    text: str
    hidden_chars: int
    memories: list = field(default_factory=list)


class HasSummaryFilter(admin.SimpleListFilter):
    title = "rolling summary"
    parameter_name = "summary"

    def lookups(self, request, model_admin):
        return (("yes", "Has a summary"), ("no", "No summary yet"))

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(metadata__has_key="summary")
        if self.value() == "no":
            return queryset.filter(~Q(metadata__has_key="summary"))
        return queryset


@admin.register(Conversation)
class ConversationAdmin(WorkspaceScopedAdmin, admin.ModelAdmin):
    list_display = ["external_id", "workspace", "user_id", "source", "message_count", "has_summary", "last_message_at"]
    list_filter = [HasSummaryFilter, "source", "workspace"]
    search_fields = ["external_id", "=user_id"]
    search_help_text = "A conversation id (substring) or a user id (exact)."
    list_select_related = ["workspace"]
    list_per_page = 100
    show_full_result_count = False
    date_hierarchy = "last_message_at"
    fields = ["external_id", "workspace", "user_id", "source", "message_count", "created_at", "last_message_at", "metadata_display"]
    readonly_fields = fields
    change_form_template = "admin/conversations/conversation/change_form.html"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="summary", boolean=True)
    def has_summary(self, obj) -> bool:
        return bool((obj.metadata or {}).get("summary"))

    @admin.display(description="metadata")
    def metadata_display(self, obj) -> str:
        # The summary and the floor it reaches have a panel of their own.
        shown = {k: v for k, v in (obj.metadata or {}).items() if k not in ("summary", "summarized_until")}
        return format_html('<div class="error-full">{}</div>', json.dumps(shown, ensure_ascii=False, indent=2))

    def floor_memories(self, request, *, conversation: Conversation, messages: list, branch_names: list[str]
                       ) -> tuple[dict[str, list], list]:
        """(what to show beside each floor, by message id; what belongs to no
        shown floor), for this request's user. Nothing here: the memories app,
        which knows what was derived from which floor and who may see what is
        awaiting review, registers this admin with its own answer."""
        return {}, []

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        conversation = self.get_object(request, object_id) if str(object_id).isdigit() else None
        if conversation is not None and self.has_view_permission(request, conversation):
            extra_context.update(self._floors_context(request, conversation))
        return super().change_view(request, object_id, form_url, extra_context)

    def _floors_context(self, request, conversation: Conversation) -> dict:
        branches = branch_list(conversation=conversation)
        if not branches:
            return {"conversation": conversation, "branches": [], "floors": []}
        wanted = request.GET.get("branch")
        branch = next((b for b in branches if b.pk == wanted or b.name == wanted), None)
        branch = branch or next((b for b in branches if b.parent_id is None), branches[0])
        view = branch_view(branch=branch)
        after = _int(request.GET.get("after"))
        around = _int(request.GET.get("around"))
        if around is not None:
            after = max(0, around - FLOORS_PER_PAGE // 2)
        after = after or 0
        messages = branch_messages(branch=view, after_floor_no=after, limit=FLOORS_PER_PAGE + 1)
        has_next = len(messages) > FLOORS_PER_PAGE
        messages = messages[:FLOORS_PER_PAGE]
        names = sorted({segment.branch_name for segment in view.segments})
        derived, unplaced = self.floor_memories(request, conversation=conversation, messages=messages,
                                                branch_names=names)
        floors = []
        for message in messages:
            text = message_text(message.content)
            floors.append(
                FloorRow(
                    message=message,
                    anchor=floor_anchor(message),
                    text=text[:MAX_SHOWN_CHARS],
                    hidden_chars=max(0, len(text) - MAX_SHOWN_CHARS),
                    memories=derived.get(message.pk, []),
                )
            )
        metadata = conversation.metadata or {}
        return {
            "conversation": conversation,
            "branches": branches,
            "branch": branch,
            "floors": floors,
            "unplaced_memories": unplaced,
            "summary": metadata.get("summary"),
            "summarized_until": summarized_until(conversation),
            "after": after,
            "prev_after": max(0, after - FLOORS_PER_PAGE) if after > 0 else None,
            "next_after": messages[-1].floor_no if has_next and messages else None,
            "floors_per_page": FLOORS_PER_PAGE,
        }


@dataclass
class SummaryEnd:
    """The last floor the rolling summary covers, as a floor of its branch."""

    floor_no: int | None
    anchor: str = ""
    branch_id: int | None = None


def summarized_until(conversation: Conversation) -> SummaryEnd | None:
    """The summarizer records the last message it read (`msg_...`); an
    operator reads a floor number, linked to that floor. Older rows hold the
    number itself."""
    until = (conversation.metadata or {}).get("summarized_until")
    if until in (None, ""):
        return None
    if isinstance(until, int):
        return SummaryEnd(floor_no=until)
    message = message_places(workspace_id=conversation.workspace_id, message_ids=[str(until)]).get(str(until))
    if message is None or message.conversation_id != conversation.pk:
        return SummaryEnd(floor_no=None)
    return SummaryEnd(floor_no=message.floor_no, anchor=floor_anchor(message), branch_id=message.branch_id)


def _int(value: str | None) -> int | None:
    try:
        return max(0, int(value)) if value not in (None, "") else None
    except ValueError:
        return None


@admin.register(Branch)
class BranchAdmin(WorkspaceScopedAdmin, admin.ModelAdmin):
    workspace_path = "conversation__workspace"
    list_display = ["name", "conversation", "parent", "fork_floor_no", "next_floor_no", "created_at"]
    list_filter = ["conversation__workspace"]
    search_fields = ["=id", "name", "conversation__external_id"]
    list_select_related = ["conversation", "parent"]
    readonly_fields = ["id", "conversation", "name", "parent", "fork_message_id", "fork_floor_no", "next_floor_no", "created_at"]
    fields = readonly_fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
