"""Batch writes over memory items (spec 003's batch status and batch delete, the
admin's approve / reject, and usage stamping by context assembly).

Items are locked in primary-key order in one transaction; changed items get
their versions in one INSERT and their new state in one UPDATE per batch, so
100 ids cost a handful of queries rather than hundreds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

import memories.services.item_rules as rules
from accounts.actors import Actor
from memories.models import LifecycleStatus, MemoryItem, VersionOperation
from memories.services.stores import lock_writable_stores_of
from memories.services.supersession import facts_supersede_on_approval, is_approval
from memories.services.versioning import lock_memory_items, memories_released_since_review, versions_record_bulk
from memory_project.errors import ValidationError

MAX_BATCH_IDS = 100
# `last_used_at` says when a memory was last injected, to the minute (as an
# API key's does): an agent assembling context every turn injects the same
# memories again and again, and rewriting their rows each time (a WAL flush
# per turn) bought nothing a reader could see.
USED_RESOLUTION = timedelta(minutes=1)
_STATE_FIELDS = ["status", "lifecycle_status", "version", "current_version_id", "updated_at"]


@dataclass
class BatchResult:
    """Per-id outcomes in request order, plus the counts spec 003 puts in `meta`."""

    results: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def clean_batch_ids(ids: Any) -> list[str]:
    if not isinstance(ids, (list, tuple)) or not all(isinstance(value, str) and value for value in ids):
        raise ValidationError("ids: must be an array of memory ids.")
    if not 1 <= len(ids) <= MAX_BATCH_IDS:
        raise ValidationError(f"ids: between 1 and {MAX_BATCH_IDS} ids.")
    if len(set(ids)) != len(ids):
        raise ValidationError("ids: must not contain duplicates.")
    return list(ids)


def _set_states(
    *, workspace, actor: Actor, ids: Sequence[str], status: str | None, lifecycle: str | None
) -> tuple[list[dict[str, Any]], int, int]:
    now = timezone.now()
    results: list[dict[str, Any]] = []
    changed: list[MemoryItem] = []
    approved: list[MemoryItem] = []
    found = 0
    released: set[str] | None = None

    def never_released(memory_id: str) -> bool:
        # One grouped query for the whole batch, and only if a rejected memory
        # is being revived by an actor who may not approve.
        nonlocal released
        if released is None:
            deprecated = [pk for pk, row in locked.items() if row.lifecycle_status == LifecycleStatus.DEPRECATED]
            released = memories_released_since_review(workspace=workspace, ids=deprecated)
        return memory_id not in released

    with transaction.atomic():
        lock_writable_stores_of(workspace=workspace, memory_ids=ids)
        locked = lock_memory_items(workspace=workspace, ids=ids)
        for memory_id in ids:
            item = locked.get(memory_id)
            if item is None:
                results.append({"id": memory_id, "result": "not_found"})
                continue
            found += 1
            new_status, new_lifecycle = rules.resolve_statuses(
                current_status=item.status,
                current_lifecycle=item.lifecycle_status,
                status=status,
                lifecycle=lifecycle,
                actor=actor,
                never_released=lambda memory_id=memory_id: never_released(memory_id),
            )
            is_change = (new_status, new_lifecycle) != (item.status, item.lifecycle_status)
            if is_change:
                if is_approval(before=item.lifecycle_status, after=new_lifecycle):
                    approved.append(item)
                item.status, item.lifecycle_status = new_status, new_lifecycle
                item.version += 1
                item.updated_at = now
                changed.append(item)
            results.append({"id": memory_id, "result": "updated", "changed": is_change})
        if changed:
            versions_record_bulk(items=changed, operation=VersionOperation.MODIFIED, actor=actor)
            MemoryItem.objects.bulk_update(changed, _STATE_FIELDS, batch_size=MAX_BATCH_IDS)
        if approved:
            facts_supersede_on_approval(workspace=workspace, approved=approved, actor=actor)
    return results, found, len(ids) - found


def memory_items_set_status(*, workspace, actor: Actor, ids: Sequence[str], status: str) -> BatchResult:
    """Set `status` (and so `lifecycle_status`, see `item_rules`) on up to 100
    items. Items already in that state count as updated but get no version.
    Counts: total, updated, not_found, status. An illegal transition for one
    item (approving a pending item without operator rights) fails the batch."""
    ids = clean_batch_ids(ids)
    status = rules.clean_status(status)
    results, updated, not_found = _set_states(workspace=workspace, actor=actor, ids=ids, status=status, lifecycle=None)
    return BatchResult(results, {"total": len(ids), "updated": updated, "not_found": not_found, "status": status})


def memory_items_set_lifecycle(*, workspace, actor: Actor, ids: Sequence[str], lifecycle_status: str) -> BatchResult:
    """Set `lifecycle_status` only (status untouched, as spec 003 says), e.g. the
    admin approving pending items (`active`, operator actors only) or sending
    items back to review (`pending`). Counts: total, updated, not_found,
    lifecycle_status."""
    ids = clean_batch_ids(ids)
    lifecycle_status = rules.clean_lifecycle(lifecycle_status)
    results, updated, not_found = _set_states(
        workspace=workspace, actor=actor, ids=ids, status=None, lifecycle=lifecycle_status
    )
    return BatchResult(
        results,
        {"total": len(ids), "updated": updated, "not_found": not_found, "lifecycle_status": lifecycle_status},
    )


def memory_items_delete(*, workspace, actor: Actor, ids: Sequence[str]) -> BatchResult:
    """Delete up to 100 items, each with a `deleted` version. Counts: total,
    deleted, not_found."""
    ids = clean_batch_ids(ids)
    results: list[dict[str, Any]] = []
    with transaction.atomic():
        locked = lock_memory_items(workspace=workspace, ids=ids)
        for memory_id in ids:
            results.append({"id": memory_id, "result": "deleted" if memory_id in locked else "not_found"})
        items = list(locked.values())
        if items:
            for item in items:
                item.version += 1
            versions_record_bulk(items=items, operation=VersionOperation.DELETED, actor=actor)
            MemoryItem.objects.filter(workspace=workspace, pk__in=list(locked)).delete()
    deleted = len(locked)
    return BatchResult(results, {"total": len(ids), "deleted": deleted, "not_found": len(ids) - deleted})


def used_stamp_is_stale(last_used_at: datetime | None, at: datetime) -> bool:
    """Whether `memory_items_mark_used` at `at` would stamp an item stamped at
    `last_used_at`: a caller that read the stamp skips the UPDATE for fresh ones."""
    return last_used_at is None or last_used_at <= at - USED_RESOLUTION


def memory_items_mark_used(*, workspace, ids: Iterable[str], at: datetime | None = None) -> int:
    """Stamp `last_used_at` on items injected into a context, unless already
    stamped within `USED_RESOLUTION` of `at`. Usage is not a modification: no
    version, no `updated_at` change, no lock (last writer wins on a
    timestamp). Returns the number of items stamped."""
    ids = list(ids)
    if not ids:
        return 0
    at = at or timezone.now()
    stale = Q(last_used_at__isnull=True) | Q(last_used_at__lte=at - USED_RESOLUTION)
    return MemoryItem.objects.filter(stale, workspace=workspace, pk__in=ids).update(last_used_at=at)
