"""Reads of spec 003's memory items, always scoped to one workspace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import Avg, Count, Q, QuerySet, Sum

from memories.filters import MemoryItemFilterSet
from memories.models import LifecycleStatus, MemoryItem, MemoryType, Status
from memory_project.errors import NotFoundError, ValidationError

STATS_TYPES = (MemoryType.FACT, MemoryType.SUMMARY, MemoryType.OPEN_LOOP)


def filterset_errors(filterset) -> ValidationError:
    lines = [f"{name}: {' '.join(str(m) for m in messages)}" for name, messages in filterset.errors.items()]
    return ValidationError("; ".join(lines) or "Invalid query parameters.")


def memory_item_list(*, workspace, filters: Mapping[str, Any] | None = None) -> QuerySet[MemoryItem]:
    """The workspace's items matching spec 003's list filters, sorted (default
    newest first). Store documents only when `scope=store` or `type=document` is
    asked. Raises ValidationError for invalid filter values."""
    filterset = MemoryItemFilterSet(data=filters or {}, queryset=MemoryItem.objects.filter(workspace=workspace))
    if not filterset.is_valid():
        raise filterset_errors(filterset)
    return filterset.qs


def memory_item_get(*, workspace, memory_id: str) -> MemoryItem:
    item = MemoryItem.objects.filter(workspace=workspace, pk=memory_id).first()
    if item is None:
        raise NotFoundError(f"No memory '{memory_id}'.")
    return item


def memory_item_stats(*, workspace, filters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Spec 003's statistics over the same filters as the list, in one query.
    `active` / `deprecated` / `pending` count the reported compat status (a
    memory awaiting review is `pending`, never `active`); `pending` and
    `by_lifecycle_status` are extensions. Averages are 0 when nothing matches."""
    queryset = memory_item_list(workspace=workspace, filters=filters).order_by()
    aggregates = {
        "total": Count("pk"),
        "active": Count("pk", filter=Q(status=Status.ACTIVE) & ~Q(lifecycle_status=LifecycleStatus.PENDING)),
        "deprecated": Count("pk", filter=Q(status=Status.DEPRECATED)),
        "avg_importance": Avg("importance"),
        "avg_confidence": Avg("confidence"),
        "estimated_tokens": Sum("token_count_estimate"),
    }
    for item_type in (*STATS_TYPES, MemoryType.DOCUMENT):
        aggregates[f"type_{item_type}"] = Count("pk", filter=Q(type=item_type))
    for lifecycle in ("pending", "active", "compacted", "deprecated"):
        aggregates[f"lifecycle_{lifecycle}"] = Count("pk", filter=Q(lifecycle_status=lifecycle))
    row = queryset.aggregate(**aggregates)
    by_type = {str(t): row[f"type_{t}"] for t in STATS_TYPES}
    if row[f"type_{MemoryType.DOCUMENT}"]:
        by_type[MemoryType.DOCUMENT] = row[f"type_{MemoryType.DOCUMENT}"]
    return {
        "total": row["total"],
        "active": row["active"],
        "deprecated": row["deprecated"],
        "pending": row["lifecycle_pending"],
        "by_type": by_type,
        "by_lifecycle_status": {
            name: row[f"lifecycle_{name}"] for name in ("pending", "active", "compacted", "deprecated")
        },
        "avg_importance": round(row["avg_importance"] or 0.0, 4),
        "avg_confidence": round(row["avg_confidence"] or 0.0, 4),
        "estimated_tokens": row["estimated_tokens"] or 0,
    }
