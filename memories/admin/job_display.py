"""A job as an operator reads it: what it did in words, when to the second,
how long it took, and the memories it wrote."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from django.contrib.admin.utils import quote
from django.db.models import Q
from django.urls import reverse

from memories.models import MemoryItem, MemoryJob, MemoryVersion

# Result counters the pipeline writes, in the order and words a person reads
# them; unknown keys follow as they are.
RESULT_LABELS: dict[str, tuple[str, str]] = {
    "summaries": ("summary written", "summaries written"),
    "facts": ("fact written", "facts written"),
    "facts_updated": ("fact updated", "facts updated"),
    "facts_unchanged": ("fact unchanged", "facts unchanged"),
    "open_loops": ("open loop written", "open loops written"),
    "resolved": ("open loop resolved", "open loops resolved"),
    "compacted": ("summary compacted", "summaries compacted"),
    "macros": ("macro summary written", "macro summaries written"),
    "edges": ("edge", "edges"),
    "batches": ("batch", "batches"),
    "floors": ("floor read", "floors read"),
}
# How many of a job's memories its page lists; the rest are one click away.
SHOWN_MEMORIES = 20


def when(moment: datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC" if moment else "—"


def took(job: MemoryJob) -> str:
    if not (job.started_at and job.finished_at):
        return ""
    seconds = (job.finished_at - job.started_at).total_seconds()
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def result_parts(result: dict | None) -> list[str]:
    """`{"facts": 2, "summaries": 1, "last_processed_floor_no": 44}` as
    ["1 summary written", "2 facts written", "up to floor 44"]; zeros left out."""
    result = dict(result or {})
    parts = []
    for key, (one, many) in RESULT_LABELS.items():
        value = result.pop(key, None)
        if isinstance(value, int) and value:
            parts.append(f"{value} {one if value == 1 else many}")
    floor = result.pop("last_processed_floor_no", None)
    if floor:
        parts.append(f"up to floor {floor}")
    for key, value in sorted(result.items()):
        if value not in (None, 0, "", [], {}):
            parts.append(f"{key.replace('_', ' ')}: {value}")
    return parts


# What a list row says of a job: what it wrote, not its bookkeeping.
SUMMARY_KEYS = ("summaries", "facts", "facts_updated", "open_loops", "resolved", "compacted", "macros")


def result_summary(result: dict | None) -> str:
    result = result or {}
    short_result = {key: result[key] for key in (*SUMMARY_KEYS, "last_processed_floor_no") if key in result}
    return ", ".join(result_parts(short_result)) or "nothing written"


@dataclass
class WrittenMemory:
    item: MemoryItem
    url: str
    how: str  # "created" | "changed"


def job_memories_q(job_id: str) -> Q:
    """Memories a job created (their source job) or changed (a version it wrote)."""
    changed = MemoryVersion.objects.filter(actor_job_id=job_id).values("memory_id")
    return Q(source_job_id=job_id) | Q(pk__in=changed)


def job_memories(job: MemoryJob) -> tuple[list[WrittenMemory], int, str]:
    """(the first memories the job wrote, how many in all, the list's URL)."""
    queryset = MemoryItem.objects.filter(job_memories_q(job.pk), workspace_id=job.workspace_id)
    total = queryset.count()
    rows = [
        WrittenMemory(
            item,
            reverse("admin:memories_memoryitem_change", args=[quote(item.pk)]),
            "created" if item.source_job_id == job.pk else "changed",
        )
        for item in queryset.order_by("type", "created_at")[:SHOWN_MEMORIES]
    ]
    url = f"{reverse('admin:memories_memoryitem_changelist')}?{urlencode({'job': job.pk})}"
    return rows, total, url
