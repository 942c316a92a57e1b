"""Chasing redacted text out of every place that may have copied it.

A version's content and path live only in their own columns, but copies leak:
the admin's change log (`LogEntry.object_repr` / `change_message`), a job's
payload, result or error, and the search index. `redaction_scrub` rewrites them
inside the redaction's transaction, so the text is gone when it commits.

Two rules keep a scrub from touching what is not a copy:

- Scope: only the workspace's own rows: the admin log entries of its memories,
  versions, stores and edges, and its own jobs. Another tenant's audit trail is
  never read, and the cost follows the workspace's size, not the whole log's.
- Exactness: a string is a copy when it holds the whole redacted text, or a
  copy of it cut at one end (the admin cuts `object_repr` at 200 characters,
  excerpts end or start with "…"). A piece from the middle, or a text shorter
  than `MIN_QUOTE_CHARS` found inside a longer string, is too likely to be
  coincidence (redacting "a" must not blank every entry with an "a" in it);
  those count only in the log entries about the redacted memories themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db.models import Q

from memories.models import MemoryEdge, MemoryItem, MemoryJob, MemoryStore, MemoryVersion, ReviewItem
from memories.search import search_index_purge

REDACTED_PLACEHOLDER = "[redacted]"
# Texts at least this long are distinctive: found anywhere inside a string, and
# a truncated copy of at least this many leading characters counts too.
MIN_QUOTE_CHARS = 16
_TRUNCATION_MARKS = ("…", "...")
_SCAN_BATCH = 500


class TextMatcher:
    """Is a string a copy of one of these texts (see the module's rules)?"""

    def __init__(self, texts: Iterable[str]):
        # Longest first: a long text decides most matches with one `in`.
        self.texts = sorted({text for text in texts if text and text.strip()}, key=len, reverse=True)
        self._whole = {text.strip() for text in self.texts}
        self._windows: set[str] | None = None

    def __bool__(self) -> bool:
        return bool(self.texts)

    def matches(self, value: str | None, *, own: bool = False) -> bool:
        """`own`: the string belongs to a row about the redacted memory itself,
        where any piece of `MIN_QUOTE_CHARS`+ characters, or a short text
        anywhere, is a copy."""
        if not value:
            return False
        if value.strip() in self._whole:
            return True
        for text in self.texts:
            if (own or len(text) >= MIN_QUOTE_CHARS) and text in value:
                return True
            if len(text) > MIN_QUOTE_CHARS and _cut_copy(value, text):
                return True
        return own and self._has_piece(value)

    def _has_piece(self, value: str) -> bool:
        size = MIN_QUOTE_CHARS
        if self._windows is None:
            self._windows = {
                text[i : i + size] for text in self.texts if len(text) > size for i in range(len(text) - size + 1)
            }
        return bool(self._windows) and any(value[i : i + size] in self._windows for i in range(len(value) - size + 1))


def _trim(value: str, *, end: bool) -> str:
    value = value.strip()
    for mark in _TRUNCATION_MARKS:
        if end and value.endswith(mark):
            return value[: -len(mark)].rstrip()
        if not end and value.startswith(mark):
            return value[len(mark) :].lstrip()
    return value


def _cut_copy(value: str, text: str) -> bool:
    """Is `value` a copy of `text` cut at one end: does it end with the first
    `MIN_QUOTE_CHARS`+ characters of `text`, or start with its last ones
    (an ellipsis where the cut was is allowed)?"""
    tail = _trim(value, end=True)
    head = text[:MIN_QUOTE_CHARS]
    start = tail.find(head)
    while start != -1:
        if text.startswith(tail[start:]):
            return True
        start = tail.find(head, start + 1)
    lead = _trim(value, end=False)
    last = text[-MIN_QUOTE_CHARS:]
    stop = lead.find(last)
    while stop != -1:
        if text.endswith(lead[: stop + MIN_QUOTE_CHARS]):
            return True
        stop = lead.find(last, stop + 1)
    return False


def _scrub_json(value: Any, matcher: TextMatcher) -> tuple[Any, bool]:
    """A copy of a JSON value with every matching string replaced by the placeholder."""
    if isinstance(value, str):
        return (REDACTED_PLACEHOLDER, True) if matcher.matches(value) else (value, False)
    if isinstance(value, list):
        changed = False
        out = []
        for element in value:
            new, hit = _scrub_json(element, matcher)
            out.append(new)
            changed |= hit
        return out, changed
    if isinstance(value, dict):
        changed = False
        result: dict[str, Any] = {}
        for key, element in value.items():
            new, hit = _scrub_json(element, matcher)
            if matcher.matches(key):
                key, hit = f"{REDACTED_PLACEHOLDER}:{len(result)}", True
            result[key] = new
            changed |= hit
        return result, changed
    return value, False


def _workspace_log_entries(workspace):
    """The admin log entries about the workspace's memories (live or deleted:
    a deleted memory's id lives on in its versions), versions, stores and edges.

    Each part is one query whose subquery walks the workspace's own rows; the
    `(content_type, object_id)` index (accounts migration 0002) answers the
    lookup, so the log's other tenants are never read."""
    types = ContentType.objects.get_for_models(
        MemoryItem, ReviewItem, MemoryVersion, MemoryStore, MemoryEdge, for_concrete_models=False
    )
    memory_types = [types[MemoryItem].pk, types[ReviewItem].pk]
    parts = [
        (memory_types, MemoryItem.objects.filter(workspace=workspace).values("pk")),
        (memory_types, MemoryVersion.objects.filter(workspace=workspace).values("memory_id")),
        ([types[MemoryVersion].pk], MemoryVersion.objects.filter(workspace=workspace).values("pk")),
        ([types[MemoryStore].pk], MemoryStore.objects.filter(workspace=workspace).values("pk")),
        ([types[MemoryEdge].pk], MemoryEdge.objects.filter(workspace=workspace).values("pk")),
    ]
    query = Q()
    for content_types, ids in parts:
        query |= Q(content_type_id__in=content_types, object_id__in=ids)
    return LogEntry.objects.filter(query).only("pk", "object_id", "object_repr", "change_message")


def scrub_admin_log(matcher: TextMatcher, *, workspace, own_ids: Iterable[str] = ()) -> int:
    """Rewrite the workspace's admin log entries that quote the text. `own_ids`:
    the redacted memories and their versions (see `TextMatcher.matches`)."""
    own = set(own_ids)
    changed = 0
    for entry in _workspace_log_entries(workspace).iterator(chunk_size=_SCAN_BATCH):
        is_own = entry.object_id in own
        fields = {}
        if matcher.matches(entry.object_repr, own=is_own):
            fields["object_repr"] = REDACTED_PLACEHOLDER
        if matcher.matches(entry.change_message, own=is_own):
            fields["change_message"] = REDACTED_PLACEHOLDER
        if fields:
            LogEntry.objects.filter(pk=entry.pk).update(**fields)
            changed += 1
    return changed


def scrub_jobs(matcher: TextMatcher, *, workspace) -> int:
    """Rewrite the workspace's job payloads, results and errors that quote the text."""
    rows = MemoryJob.objects.filter(workspace=workspace).only("pk", "payload", "result", "error")
    changed = 0
    for job in rows.iterator(chunk_size=_SCAN_BATCH):
        fields: dict[str, Any] = {}
        payload, hit = _scrub_json(job.payload, matcher)
        if hit:
            fields["payload"] = payload
        result, hit = _scrub_json(job.result, matcher)
        if hit:
            fields["result"] = result
        if matcher.matches(job.error):
            fields["error"] = REDACTED_PLACEHOLDER
        if fields:
            MemoryJob.objects.filter(pk=job.pk).update(**fields)
            changed += 1
    return changed


def redaction_scrub(*, workspace, texts: Iterable[str], memory_ids: Iterable[str] = ()) -> None:
    """Remove every copy of `texts` from the workspace's rows outside the version
    table. `memory_ids`: the memories whose versions were redacted. Call inside
    the redaction's transaction, after the versions themselves were cleared."""
    matcher = TextMatcher(texts)
    if not matcher:
        return
    memory_ids = list(memory_ids)
    own_ids = set(memory_ids)
    if memory_ids:
        own_ids.update(
            MemoryVersion.objects.filter(workspace=workspace, memory_id__in=memory_ids).values_list("pk", flat=True)
        )
    scrub_admin_log(matcher, workspace=workspace, own_ids=own_ids)
    scrub_jobs(matcher, workspace=workspace)
    search_index_purge()
