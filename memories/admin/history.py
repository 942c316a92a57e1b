"""Reads behind a memory's admin page: its version history with diffs between
consecutive versions, its edges, and the conversation floor it came from."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.db.models.functions import Substr
from django.urls import reverse

from conversations.admin import floor_anchor
from conversations.selectors.references import conversation_find, message_source
from memories.admin.labels import ActorNames, actor_names, short
from memories.admin.visibility import readable_text
from memories.models import MemoryEdge, MemoryItem, MemoryVersion

if TYPE_CHECKING:
    from conversations.models import Conversation, Message

# Word-level diffs over at most this many tokens per side; past it (a rare
# 100 kB rewrite) the diff is taken line by line, which stays fast.
MAX_WORD_TOKENS = 20_000
# An unchanged stretch longer than this shows its two ends around a gap.
MAX_EQUAL_CHARS = 300
EQUAL_END_CHARS = 120
# Latin words (with apostrophes and hyphens) are one token; every other
# character (CJK, punctuation) is a token of its own, so a changed character
# in a Chinese sentence is marked alone.
TOKEN_RE = re.compile(r"\s+|[0-9A-Za-z\u00C0-\u024F_'’-]+|.", re.S)


@dataclass
class DiffPiece:
    kind: str  # "eq" | "add" | "del" | "gap"
    text: str


@dataclass
class VersionRow:
    version: MemoryVersion
    actor_label: str
    redacted_by_label: str
    is_head: bool
    diff: list[DiffPiece] = field(default_factory=list)
    diff_note: str = ""
    attribute_changes: list[tuple[str, Any, Any]] = field(default_factory=list)


def actor_label(obj: Any, prefix: str, users: dict[int, str]) -> str:
    """An actor without looking up key or job names (see `labels.actor_names`)."""
    return ActorNames(keys={}, users=users, jobs={}).label(obj, prefix)


def user_names(ids: set[int]) -> dict[int, str]:
    ids = {i for i in ids if i is not None}
    if not ids:
        return {}
    model = get_user_model()
    return {pk: name for pk, name in model.objects.filter(pk__in=ids).values_list("pk", model.USERNAME_FIELD)}


def _equal_piece(text: str) -> list[DiffPiece]:
    if len(text) <= MAX_EQUAL_CHARS:
        return [DiffPiece("eq", text)]
    hidden = len(text) - 2 * EQUAL_END_CHARS
    return [
        DiffPiece("eq", text[:EQUAL_END_CHARS]),
        DiffPiece("gap", f" … {hidden:,} unchanged characters … "),
        DiffPiece("eq", text[-EQUAL_END_CHARS:]),
    ]


def word_diff(before: str, after: str) -> list[DiffPiece]:
    """`after` against `before` word by word: unchanged text, deletions and
    insertions in reading order (a replacement is its deletion then its
    insertion)."""
    old, new = TOKEN_RE.findall(before), TOKEN_RE.findall(after)
    if max(len(old), len(new)) > MAX_WORD_TOKENS:
        old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    pieces: list[DiffPiece] = []
    # Junk heuristics would skip common words (so diff them exactly) unless the
    # texts are long enough for the quadratic worst case to matter.
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=max(len(old), len(new)) > 2000)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            pieces.extend(_equal_piece("".join(old[i1:i2])))
            continue
        if i2 > i1:
            pieces.append(DiffPiece("del", "".join(old[i1:i2])))
        if j2 > j1:
            pieces.append(DiffPiece("add", "".join(new[j1:j2])))
    return pieces


def version_history(*, workspace_id: str, memory_id: str, head_version_id: str | None) -> list[VersionRow]:
    """Versions newest first, each diffed against the one before it."""
    versions = list(
        MemoryVersion.objects.filter(workspace_id=workspace_id, memory_id=memory_id).order_by("version", "created_at")
    )
    names = actor_names(versions, prefixes=("actor", "redacted_by"))
    rows: list[VersionRow] = []
    previous: MemoryVersion | None = None
    for version in versions:
        row = VersionRow(
            version=version,
            actor_label=names.link(version, "actor"),
            redacted_by_label=names.link(version, "redacted_by") if version.redacted_by_type else "",
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
            # The first version is shown as written, not as one long insertion.
            row.diff = _equal_piece(version.content or "")
        elif previous.redacted_at is not None:
            row.diff_note = "previous version redacted"
        elif (previous.content or "") == (version.content or ""):
            row.diff_note = "content unchanged"
        else:
            row.diff = word_diff(previous.content or "", version.content or "")
        rows.append(row)
        previous = version
    rows.reverse()
    return rows


# How much of the memory at an edge's other end its row shows.
EDGE_EXCERPT_CHARS = 160
# What an edge says, read from this memory's side: (outgoing, incoming).
EDGE_PHRASES = {
    "updates": ("replaces", "is replaced by"),
    "derived_from": ("is derived from", "is a source of"),
    "compacts": ("compacts", "is compacted into"),
    "resolves": ("resolves", "is resolved by"),
    "supports": ("supports", "is supported by"),
    "contradicts": ("contradicts", "is contradicted by"),
}


@dataclass
class EdgeRow:
    edge: MemoryEdge
    other: MemoryItem
    url: str
    phrase: str
    # The other memory's text, cut to EDGE_EXCERPT_CHARS; None where the
    # operator may not read it (awaiting review, see `visibility`).
    excerpt: str | None


def item_edges(item: MemoryItem, *, approved_only: bool = False) -> tuple[list[EdgeRow], list[EdgeRow]]:
    """(outgoing, incoming) edges with the item at the other end and the head
    of its text, two queries (the excerpt is cut in the database: a content
    may hold 100 kB)."""

    def rows(queryset, other_attr: str, outgoing: bool) -> list[EdgeRow]:
        out = []
        edges = (
            queryset.select_related(other_attr)
            .defer(f"{other_attr}__content")
            .annotate(other_excerpt=Substr(f"{other_attr}__content", 1, EDGE_EXCERPT_CHARS + 1))
            .order_by("relation", "created_at")
        )
        for edge in edges:
            other = getattr(edge, other_attr)
            text = short(edge.other_excerpt or "", EDGE_EXCERPT_CHARS)
            phrases = EDGE_PHRASES.get(edge.relation, (edge.relation, f"{edge.relation} (incoming)"))
            out.append(EdgeRow(
                edge, other, reverse("admin:memories_memoryitem_change", args=[quote(other.pk)]),
                phrases[0 if outgoing else 1], readable_text(other, approved_only=approved_only, text=text),
            ))
        return out

    return (
        rows(MemoryEdge.objects.filter(from_item=item), "to_item", True),
        rows(MemoryEdge.objects.filter(to_item=item), "from_item", False),
    )


@dataclass
class SourceFloor:
    message: Message
    conversation: Conversation
    url: str


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
    message = message_source(workspace_id=item.workspace_id, message_ids=ids)
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
    return conversation_find(workspace_id=item.workspace_id, ref=conversation_ref)
