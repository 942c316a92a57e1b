"""Reads of memory stores, their memories and versions, always within a workspace.

Every list is a keyset scan (no OFFSET) that fetches one row more than the page
to learn whether a next page exists, and its statistics come from one aggregate
query, so a list costs a fixed number of queries whatever its length.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Count, F, Q, QuerySet, Sum, Value
from django.db.models.functions import Coalesce, Collate
from django.utils.dateparse import parse_datetime

from memories.models import MemoryItem, MemoryStore, MemoryVersion, VersionOperation
from memories.pagination import decode_page, encode_page
from memories.paths import prefix_upper_bound, rollup
from memory_project.errors import NotFoundError, ValidationError


@dataclass(frozen=True)
class Page:
    items: list[Any]
    next_page: str | None


@dataclass(frozen=True)
class MemoryPrefix:
    """A directory roll-up in a memory list (`{"type": "memory_prefix"}`); not stored."""

    path: str


# --- stores ---------------------------------------------------------------------


def _stores_with_stats(workspace) -> QuerySet[MemoryStore]:
    return MemoryStore.objects.filter(workspace=workspace).annotate(
        entry_count=Count("memories"),
        total_size=Coalesce(Sum("memories__content_size_bytes"), Value(0)),
    )


def memory_store_get(*, workspace, store_id: str) -> MemoryStore:
    """The store with `entry_count` and `total_size`, or NotFoundError."""
    store = _stores_with_stats(workspace).filter(pk=store_id).first()
    if store is None:
        raise NotFoundError(f"No memory store '{store_id}'.")
    return store


def memory_store_exists(*, workspace, store_id: str) -> MemoryStore:
    store = MemoryStore.objects.filter(workspace=workspace, pk=store_id).first()
    if store is None:
        raise NotFoundError(f"No memory store '{store_id}'.")
    return store


def _newest_first_after(qs: QuerySet, position: dict[str, Any] | None) -> QuerySet:
    if position is None:
        return qs
    created = parse_datetime(str(position.get("c", "")))
    last_id = position.get("i")
    if created is None or not isinstance(last_id, str):
        raise ValidationError("page: not a valid page token for this list.")
    return qs.filter(Q(created_at__lt=created) | Q(created_at=created, pk__lt=last_id))


def _newest_first_page(qs: QuerySet, *, kind: str, page: str | None, limit: int) -> Page:
    rows = list(_newest_first_after(qs, decode_page(kind, page)).order_by("-created_at", "-pk")[: limit + 1])
    next_page = None
    if len(rows) > limit:
        rows = rows[:limit]
        last = rows[-1]
        next_page = encode_page(kind, {"c": last.created_at.isoformat(), "i": last.pk})
    return Page(rows, next_page)


def memory_store_list(
    *,
    workspace,
    include_archived: bool = False,
    created_gte: datetime | None = None,
    created_lte: datetime | None = None,
    limit: int = 20,
    page: str | None = None,
) -> Page:
    """Stores, newest first, with their statistics."""
    qs = _stores_with_stats(workspace)
    if not include_archived:
        qs = qs.filter(archived_at__isnull=True)
    if created_gte is not None:
        qs = qs.filter(created_at__gte=created_gte)
    if created_lte is not None:
        qs = qs.filter(created_at__lte=created_lte)
    return _newest_first_page(qs, kind="stores", page=page, limit=limit)


# --- memories -------------------------------------------------------------------


def _path_key():
    # Paths sort as code points (= UTF-8 bytes) so a directory's memories are
    # contiguous. SQLite compares bytes already; PostgreSQL would use the
    # database's locale collation, which may ignore punctuation such as '/'.
    if connection.vendor == "postgresql":
        return Collate(F("path"), "C")
    return F("path")


def memory_get(*, workspace, store_id: str, memory_id: str) -> MemoryItem:
    item = MemoryItem.objects.filter(workspace=workspace, store_id=store_id, pk=memory_id).first()
    if item is None:
        memory_store_exists(workspace=workspace, store_id=store_id)
        raise NotFoundError(f"No memory '{memory_id}' in memory store '{store_id}'.")
    return item


def memory_get_by_path(*, store: MemoryStore, path: str) -> MemoryItem | None:
    return MemoryItem.objects.filter(store=store, path=path).first()


# Rows read per query while rolling paths up into prefixes: a few pages' worth,
# so a typical listing is one query, and a large rolled-up directory is jumped
# over with one more query instead of being read row by row.
_SCAN_FACTOR = 3


def memory_list(
    *, store: MemoryStore, prefix: str = "/", depth: int = 0, limit: int = 20, page: str | None = None,
    with_content: bool = False,
) -> Page:
    """Memories below `prefix` ordered by path; with `depth` > 0, deeper paths are
    rolled up into one `MemoryPrefix` per directory. Both kinds count toward
    `limit`."""
    position = decode_page("memories", page)
    if position is not None and (position.get("p") != prefix or position.get("d") != depth):
        raise ValidationError("page: this token belongs to a listing with another path_prefix or depth.")
    base = MemoryItem.objects.filter(store=store).annotate(path_key=_path_key())
    if not with_content:
        base = base.defer("content")
    if prefix != "/":
        base = base.filter(path_key__gte=prefix, path_key__lt=prefix_upper_bound(prefix))
    # The scan position: the last key emitted, exclusive ("gt"), or a prefix's
    # upper bound, inclusive ("gte").
    after, inclusive = (position["k"], position["o"] == "gte") if position else (None, False)
    out: list[Any] = []
    batch = limit * _SCAN_FACTOR + 1
    exhausted = False
    while len(out) <= limit and not exhausted:
        qs = base
        if after is not None:
            qs = qs.filter(path_key__gte=after) if inclusive else qs.filter(path_key__gt=after)
        rows = list(qs.order_by("path_key")[:batch])
        exhausted = len(rows) < batch
        current: str | None = None
        for row in rows:
            if current is not None and row.path.startswith(current):
                continue  # still inside the directory just rolled up
            if len(out) == limit:
                out.append(None)  # a sentinel: something follows this page
                break
            rolled = rollup(row.path, prefix=prefix, depth=depth)
            if rolled is None:
                out.append(row)
                after, inclusive, current = row.path, False, None
            else:
                out.append(MemoryPrefix(rolled))
                after, inclusive, current = prefix_upper_bound(rolled), True, rolled
    next_page = None
    if len(out) > limit:
        out = out[:limit]
        last = out[-1]
        if isinstance(last, MemoryPrefix):
            token = {"k": prefix_upper_bound(last.path), "o": "gte"}
        else:
            token = {"k": last.path, "o": "gt"}
        next_page = encode_page("memories", {**token, "p": prefix, "d": depth})
    return Page(out, next_page)


# --- versions -------------------------------------------------------------------


def memory_version_get(*, workspace, store_id: str, version_id: str) -> MemoryVersion:
    version = MemoryVersion.objects.filter(workspace=workspace, store_id=store_id, pk=version_id).first()
    if version is None:
        memory_store_exists(workspace=workspace, store_id=store_id)
        raise NotFoundError(f"No memory version '{version_id}' in memory store '{store_id}'.")
    return version


def memory_version_list(
    *,
    store: MemoryStore,
    memory_id: str | None = None,
    operation: str | None = None,
    session_id: str | None = None,
    api_key_id: str | None = None,
    service_account_id: str | None = None,
    created_gte: datetime | None = None,
    created_lte: datetime | None = None,
    limit: int = 20,
    page: str | None = None,
    with_content: bool = False,
) -> Page:
    """The store's versions, newest first (they outlive deleted memories)."""
    qs = MemoryVersion.objects.filter(store=store)
    if not with_content:
        qs = qs.defer("content")
    if memory_id:
        qs = qs.filter(memory_id=memory_id)
    if operation is not None:
        if operation not in VersionOperation.values:
            raise ValidationError("operation must be one of: created, modified, deleted.")
        qs = qs.filter(operation=operation)
    if session_id:
        qs = qs.filter(actor_session_id=session_id)
    if api_key_id:
        qs = qs.filter(actor_api_key_id=api_key_id)
    if service_account_id:
        # Background jobs are shown as service accounts (see the serializer).
        qs = qs.filter(actor_job_id=service_account_id)
    if created_gte is not None:
        qs = qs.filter(created_at__gte=created_gte)
    if created_lte is not None:
        qs = qs.filter(created_at__lte=created_lte)
    return _newest_first_page(qs, kind="versions", page=page, limit=limit)
