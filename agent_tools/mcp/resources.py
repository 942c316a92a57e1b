"""What the MCP server offers for reading, besides its tools:

- `memory://stores/{store_id}/{path}`: a memory-store document (its content);
- `memory://conversations/{conversation_id}/summary`: a conversation's rolling summary.

Lists are paged by an opaque cursor; every read is confined to the key's workspace.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from urllib.parse import quote, unquote

from conversations.selectors.conversations import conversation_get_or_404
from conversations.selectors.references import conversations_with_summary
from memories.models import MemoryItem, Scope
from memories.paths import normalize_path
from memories.selectors.summaries import visible_rolling_summary
from memory_project.errors import NotFoundError, ValidationError

STORE_PREFIX = "memory://stores/"
CONVERSATION_PREFIX = "memory://conversations/"
SUMMARY_SUFFIX = "/summary"
STORE_TEMPLATE = "memory://stores/{store_id}/{+path}"
SUMMARY_TEMPLATE = "memory://conversations/{conversation_id}/summary"
# Resources per list page: a listing is cheap to render, and clients fetch on.
PAGE_SIZE = 100


@dataclass(frozen=True)
class ResourceEntry:
    uri: str
    name: str
    title: str
    description: str
    mime_type: str
    size: int | None = None


@dataclass(frozen=True)
class ResourceContent:
    uri: str
    text: str
    mime_type: str


def store_document_uri(store_id: str, path: str) -> str:
    return STORE_PREFIX + quote(store_id, safe="") + "/" + quote(path.lstrip("/"), safe="/")


def summary_uri(conversation_id: str) -> str:
    return CONVERSATION_PREFIX + quote(conversation_id, safe="") + SUMMARY_SUFFIX


def _mime(path: str) -> str:
    guessed, _ = mimetypes.guess_type(path, strict=False)
    if path.endswith(".md"):
        return "text/markdown"
    return guessed if guessed and guessed.startswith("text/") else "text/plain"


def _summary_conversations(workspace):

    return conversations_with_summary(workspace=workspace)


def resource_list(*, workspace, cursor: str | None) -> tuple[list[ResourceEntry], str | None]:
    """One page: the store documents (store by store, in path order), then the
    conversations that have a rolling summary. Returns (entries, next cursor)."""
    kind, offset = _decode_cursor(cursor)
    if kind == "s":
        rows = list(
            MemoryItem.objects.filter(workspace=workspace, scope=Scope.STORE, store__archived_at__isnull=True)
            .order_by("store_id", "path")
            .values_list("store_id", "store__name", "path", "content_size_bytes")[offset : offset + PAGE_SIZE + 1]
        )
        entries = [
            ResourceEntry(
                uri=store_document_uri(store_id, path), name=path, title=f"{store_name}: {path}",
                description=f"File {path} of the memory store {store_name!r} ({store_id}).",
                mime_type=_mime(path), size=size,
            )
            for store_id, store_name, path, size in rows[:PAGE_SIZE]
        ]
        if len(rows) > PAGE_SIZE:
            return entries, f"s:{offset + PAGE_SIZE}"
        if not entries:
            kind, offset = "c", 0
        else:
            return entries, "c:0" if _summary_conversations(workspace).exists() else None
    rows = list(_summary_conversations(workspace).values_list("external_id", flat=True)[offset : offset + PAGE_SIZE + 1])
    entries = [
        ResourceEntry(
            uri=summary_uri(conversation_id), name=f"{conversation_id} summary",
            title=f"Summary of conversation {conversation_id}",
            description=f"The rolling summary of the conversation {conversation_id!r}.",
            mime_type="text/plain",
        )
        for conversation_id in rows[:PAGE_SIZE]
    ]
    return entries, f"c:{offset + PAGE_SIZE}" if len(rows) > PAGE_SIZE else None


def _decode_cursor(cursor: str | None) -> tuple[str, int]:
    if not cursor:
        return "s", 0
    kind, _, number = cursor.partition(":")
    if kind not in ("s", "c") or not number.isdigit():
        raise ValidationError("Invalid cursor.")
    return kind, int(number)


def resource_read(*, workspace, uri: str) -> ResourceContent:
    """The content behind a resource URI, or NotFoundError (also for another
    workspace's ids) / ValidationError (a URI this server does not serve)."""
    if uri.startswith(STORE_PREFIX):
        store_id, _, raw_path = uri[len(STORE_PREFIX):].partition("/")
        store_id = unquote(store_id)
        path = normalize_path("/" + unquote(raw_path))
        item = (
            MemoryItem.objects.filter(workspace=workspace, scope=Scope.STORE, store_id=store_id, path=path)
            .only("content").first()
        )
        if item is None:
            raise NotFoundError(f"No memory at {path} in memory store '{store_id}'.")
        return ResourceContent(uri=uri, text=item.content, mime_type=_mime(path))
    if uri.startswith(CONVERSATION_PREFIX) and uri.endswith(SUMMARY_SUFFIX):
        conversation_id = unquote(uri[len(CONVERSATION_PREFIX) : -len(SUMMARY_SUFFIX)])
        return ResourceContent(uri=uri, text=_rolling_summary(workspace, conversation_id), mime_type="text/plain")
    raise ValidationError(f"Unknown resource {uri!r}: this server serves {STORE_TEMPLATE} and {SUMMARY_TEMPLATE}.")


def _rolling_summary(workspace, conversation_id: str) -> str:
    """The main line's rolling summary as a reader may see it
    (`memories.selectors.summaries`: in a review workspace, approved summaries only)."""

    conversation = conversation_get_or_404(workspace=workspace, external_id=conversation_id)
    return visible_rolling_summary(workspace=workspace, external_id=conversation.external_id,
                                   metadata=conversation.metadata)
