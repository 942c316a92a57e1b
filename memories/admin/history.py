"""Reads behind a memory's admin page: its version history with diffs between
consecutive versions, its edges, and the conversation floor it came from."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.urls import reverse

from conversations.models import Conversation, Message
from memories.models import MemoryEdge, MemoryItem, MemoryVersion

# A diff of two 100 kB versions is long; past this many lines the page shows
# the head of the diff and says how much was left out.
MAX_DIFF_LINES = 400


@dataclass
class DiffLine:
    kind: str  # "add" | "del" | "ctx" | "hunk"
    text: str


@dataclass
class VersionRow:
    version: MemoryVersion
    actor_label: str
    redacted_by_label: str
    is_head: bool
    diff: list[DiffLine] = field(default_factory=list)
    diff_truncated: int = 0
    diff_note: str = ""
    attribute_changes: list[tuple[str, Any, Any]] = field(default_factory=list)


def actor_label(obj: Any, prefix: str, users: dict[int, str]) -> str:
    kind = getattr(obj, f"{prefix}_type", None)
    if not kind:
        return ""
    if kind == "user":
        user_id = getattr(obj, f"{prefix}_user_id")
        return f"operator {users.get(user_id, f'#{user_id}')}"
    if kind == "api_key":
        return f"API key {getattr(obj, f'{prefix}_api_key_id')}"
    if kind == "session":
        return f"session {getattr(obj, f'{prefix}_session_id')}"
    if kind == "job":
        return f"job {getattr(obj, f'{prefix}_job_id')}"
    return kind


def user_names(ids: set[int]) -> dict[int, str]:
    ids = {i for i in ids if i is not None}
    if not ids:
        return {}
    model = get_user_model()
    return {pk: name for pk, name in model.objects.filter(pk__in=ids).values_list("pk", model.USERNAME_FIELD)}


def text_diff(before: str, after: str) -> tuple[list[DiffLine], int]:
    lines: list[DiffLine] = []
    for raw in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=2):
        if raw.startswith(("---", "+++")):
            continue
        if raw.startswith("@@"):
            lines.append(DiffLine("hunk", raw))
        elif raw.startswith("+"):
            lines.append(DiffLine("add", raw[1:]))
        elif raw.startswith("-"):
            lines.append(DiffLine("del", raw[1:]))
        else:
            lines.append(DiffLine("ctx", raw[1:]))
    if len(lines) > MAX_DIFF_LINES:
        return lines[:MAX_DIFF_LINES], len(lines) - MAX_DIFF_LINES
    return lines, 0


def version_history(*, workspace_id: str, memory_id: str, head_version_id: str | None) -> list[VersionRow]:
    """Versions newest first, each diffed against the one before it."""
    versions = list(
        MemoryVersion.objects.filter(workspace_id=workspace_id, memory_id=memory_id).order_by("version", "created_at")
    )
    users = user_names({v.actor_user_id for v in versions} | {v.redacted_by_user_id for v in versions})
    rows: list[VersionRow] = []
    previous: MemoryVersion | None = None
    for version in versions:
        row = VersionRow(
            version=version,
            actor_label=actor_label(version, "actor", users),
            redacted_by_label=actor_label(version, "redacted_by", users),
            is_head=version.pk == head_version_id,
        )
        if previous is not None:
            old_attrs, new_attrs = previous.attributes or {}, version.attributes or {}
            row.attribute_changes = [
                (name, old_attrs.get(name), new_attrs.get(name))
                for name in sorted(set(old_attrs) | set(new_attrs))
                if old_attrs.get(name) != new_attrs.get(name)
            ]
        if version.redacted_at is not None:
            row.diff_note = "redacted"
        elif version.operation == "deleted":
            row.diff_note = "deleted"
        elif previous is None:
            row.diff, row.diff_truncated = text_diff("", version.content or "")
        elif previous.redacted_at is not None:
            row.diff_note = "previous version redacted"
        elif (previous.content or "") == (version.content or ""):
            row.diff_note = "content unchanged"
        else:
            row.diff, row.diff_truncated = text_diff(previous.content or "", version.content or "")
        rows.append(row)
        previous = version
    rows.reverse()
    return rows


@dataclass
class EdgeRow:
    edge: MemoryEdge
    other: MemoryItem
    url: str


def item_edges(item: MemoryItem) -> tuple[list[EdgeRow], list[EdgeRow]]:
    """(outgoing, incoming) edges with the item at the other end, two queries."""

    def rows(queryset, other_attr: str) -> list[EdgeRow]:
        out = []
        for edge in queryset.select_related(other_attr).defer(f"{other_attr}__content").order_by("relation", "created_at"):
            other = getattr(edge, other_attr)
            out.append(EdgeRow(edge, other, reverse("admin:memories_memoryitem_change", args=[quote(other.pk)])))
        return out

    return (
        rows(MemoryEdge.objects.filter(from_item=item), "to_item"),
        rows(MemoryEdge.objects.filter(to_item=item), "from_item"),
    )


@dataclass
class SourceFloor:
    message: Message
    conversation: Conversation
    url: str


def floor_anchor(message: Message) -> str:
    return f"floor-{message.branch_id}-{message.floor_no}"


def conversation_floor_url(message: Message) -> str:
    base = reverse("admin:conversations_conversation_change", args=[message.conversation_id])
    return f"{base}?branch={message.branch_id}&around={message.floor_no}#{floor_anchor(message)}"


def source_floor(item: MemoryItem) -> SourceFloor | None:
    """The message a memory was extracted from (or the floor its scope names)."""
    candidates = [item.source_message_id, item.source_floor_id]
    if item.scope == "floor":
        candidates.append(item.scope_id)
    ids = [c for c in candidates if c]
    if not ids:
        return None
    message = (
        Message.objects.filter(workspace_id=item.workspace_id, pk__in=ids)
        .select_related("conversation", "branch")
        .defer("content")
        .first()
    )
    if message is None:
        return None
    return SourceFloor(message, message.conversation, conversation_floor_url(message))


def scope_conversation(item: MemoryItem) -> Conversation | None:
    """The conversation a chat or branch scope belongs to, if it still exists."""
    conversation_ref: str | None = None
    if item.scope == "chat":
        conversation_ref = item.scope_id
    elif item.scope == "branch":
        try:
            conversation_ref = str(json.loads(item.scope_id)[0])
        except (ValueError, TypeError, IndexError, KeyError):
            conversation_ref = None
    if not conversation_ref:
        return None
    found = Conversation.objects.filter(workspace_id=item.workspace_id, external_id=conversation_ref).first()
    if found is None and conversation_ref.isdigit():
        found = Conversation.objects.filter(workspace_id=item.workspace_id, pk=int(conversation_ref)).first()
    return found
