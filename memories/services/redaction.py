"""Chasing redacted text out of every place that may have copied it.

A version's content and path live only in their own columns, but copies leak:
the admin's change log (`LogEntry.object_repr` / `change_message`), a job's
payload, result or error, and the search index. `redaction_scrub` rewrites all
of them inside the redaction's transaction, so the text is gone when it commits.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db.models import Q

from memories.models import MemoryJob
from memories.search import search_index_purge

REDACTED_PLACEHOLDER = "[redacted]"
# A copy sharing this many consecutive characters with redacted text counts as
# a copy (a truncated admin repr, a quoted snippet in an error). Shorter runs
# are too likely to be coincidence across unrelated rows.
MIN_FRAGMENT_CHARS = 16
_SCAN_BATCH = 500


class TextMatcher:
    """Does a string contain any of these texts, or a long enough piece of one?"""

    def __init__(self, texts: Iterable[str]):
        self.short: list[str] = []
        self.windows: set[str] = set()
        for text in texts:
            if not text:
                continue
            if len(text) <= MIN_FRAGMENT_CHARS:
                self.short.append(text)
            else:
                size = MIN_FRAGMENT_CHARS
                self.windows.update(text[i : i + size] for i in range(len(text) - size + 1))

    def __bool__(self) -> bool:
        return bool(self.short or self.windows)

    def matches(self, value: str | None) -> bool:
        if not value:
            return False
        if any(text in value for text in self.short):
            return True
        size = MIN_FRAGMENT_CHARS
        if self.windows and len(value) >= size:
            return any(value[i : i + size] in self.windows for i in range(len(value) - size + 1))
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


def scrub_admin_log(matcher: TextMatcher) -> int:
    """Rewrite admin log entries about memory objects that quote the text."""
    content_types = ContentType.objects.filter(app_label="memories")
    rows = LogEntry.objects.filter(content_type__in=content_types).only("pk", "object_repr", "change_message")
    changed = 0
    for entry in rows.iterator(chunk_size=_SCAN_BATCH):
        fields = []
        if matcher.matches(entry.object_repr):
            entry.object_repr = REDACTED_PLACEHOLDER
            fields.append("object_repr")
        if matcher.matches(entry.change_message):
            entry.change_message = REDACTED_PLACEHOLDER
            fields.append("change_message")
        if fields:
            entry.save(update_fields=fields)
            changed += 1
    return changed


def scrub_jobs(matcher: TextMatcher, *, workspace) -> int:
    """Rewrite job payloads, results and errors (of the workspace, and the
    workspace-less maintenance jobs) that quote the text."""
    rows = MemoryJob.objects.filter(Q(workspace=workspace) | Q(workspace__isnull=True)).only(
        "pk", "payload", "result", "error"
    )
    changed = 0
    for job in rows.iterator(chunk_size=_SCAN_BATCH):
        fields = []
        payload, hit = _scrub_json(job.payload, matcher)
        if hit:
            job.payload = payload
            fields.append("payload")
        result, hit = _scrub_json(job.result, matcher)
        if hit:
            job.result = result
            fields.append("result")
        if matcher.matches(job.error):
            job.error = REDACTED_PLACEHOLDER
            fields.append("error")
        if fields:
            MemoryJob.objects.filter(pk=job.pk).update(**{name: getattr(job, name) for name in fields})
            changed += 1
    return changed


def redaction_scrub(*, workspace, texts: Iterable[str]) -> None:
    """Remove every copy of `texts` outside the version table. Call inside the
    redaction's transaction, after the versions themselves were cleared."""
    matcher = TextMatcher(texts)
    if not matcher:
        return
    scrub_admin_log(matcher)
    scrub_jobs(matcher, workspace=workspace)
    search_index_purge()
