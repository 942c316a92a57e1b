"""The one version history and the one redaction path, shared by spec 003's
items and the stores' documents.

Every create / modify / delete of a `MemoryItem` ends with `version_record`
inside the caller's transaction, so the item row and its version commit
together or not at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from accounts.actors import Actor
from memories.models import LifecycleStatus, MemoryItem, MemoryVersion, Status, VersionOperation
from memories.recall.index import memory_entries_rebuild, memory_entries_sync
from memories.services.item_rules import REPORTED_PENDING
from memories.services.redaction import redaction_scrub
from memory_project.db import insert_objects, new_object
from memory_project.errors import ConflictError, NotFoundError
from memory_project.ids import new_memory_version_id

# Versions of deleted memories are purged in chunks of this many memories, so
# one purge never holds a huge IN list or a long write lock.
PURGE_BATCH_MEMORIES = 500
_REDACTION_FIELDS = [
    "content",
    "content_sha256",
    "content_size_bytes",
    "path",
    "redacted_at",
    "redacted_by_type",
    "redacted_by_api_key_id",
    "redacted_by_user_id",
    "redacted_by_session_id",
    "redacted_by_job_id",
]

# Item fields copied into a version's `attributes`. Content and path are kept in
# their own columns so that redaction can clear them; nothing else may hold them.
SNAPSHOT_FIELDS = (
    "scope",
    "scope_id",
    "type",
    "summary_tier",
    "fact_key",
    "importance",
    "confidence",
    "source_floor_id",
    "source_message_id",
    "sources",
    "source_job_id",
    "status",
    "lifecycle_status",
    "token_count_estimate",
    "coverage_start_floor_no",
    "coverage_end_floor_no",
    "derived_from_count",
    "due_date",  # as YYYY-MM-DD
    "metadata",
)


def content_fingerprint(content: str) -> tuple[str, int]:
    """(lowercase hex SHA-256, size in bytes) of the UTF-8 content, no normalization."""
    data = content.encode("utf-8")
    return hashlib.sha256(data).hexdigest(), len(data)


def lock_memory_items(*, workspace, ids: Iterable[str]) -> dict[str, MemoryItem]:
    """Lock the workspace's items with these ids, in primary-key order (so two
    transactions locking overlapping sets cannot deadlock). Call inside
    `transaction.atomic()`; missing ids are simply absent from the result."""
    rows = MemoryItem.objects.select_for_update().filter(workspace=workspace, pk__in=list(ids)).order_by("pk")
    return {row.pk: row for row in rows}


def lock_memory_item(*, workspace, memory_id: str) -> MemoryItem:
    """The locked item, or NotFoundError. Call inside `transaction.atomic()`."""
    item = lock_memory_items(workspace=workspace, ids=[memory_id]).get(memory_id)
    if item is None:
        raise NotFoundError(f"No memory '{memory_id}'.")
    return item


def memories_released_since_review(*, workspace, ids: Iterable[str]) -> set[str]:
    """Which of these memories are free of review: never `pending`, or `active`
    / `compacted` after they last entered review, as their versions record it.
    The others, when `deprecated`, were rejected in review: reviving them is an
    approval. One grouped query."""
    ids = list(ids)
    if not ids:
        return set()
    rows = (
        MemoryVersion.objects.filter(workspace=workspace, memory_id__in=ids)
        .values("memory_id")
        .annotate(
            last_pending=Max("version", filter=Q(attributes__lifecycle_status=LifecycleStatus.PENDING)),
            last_released=Max(
                "version",
                filter=Q(attributes__lifecycle_status__in=[LifecycleStatus.ACTIVE, LifecycleStatus.COMPACTED]),
            ),
        )
        .values_list("memory_id", "last_pending", "last_released")
    )
    return {
        memory_id
        for memory_id, pending, released in rows
        if pending is None or (released is not None and released > pending)
    }


def version_preassign(item: MemoryItem) -> str:
    """Give the item the id of the version about to be written, before the item
    row is saved, so that `version_record(..., preassigned=True)` needs no
    second UPDATE of the item (a create or update then costs one extra INSERT)."""
    item.current_version_id = new_memory_version_id()
    return item.current_version_id


def version_record(*, item: MemoryItem, operation: str, actor: Actor, preassigned: bool = False) -> MemoryVersion:
    """Write the immutable version for the item's state after `operation` and
    point the item at it.

    The caller holds the item's lock (or has just created it) inside a
    transaction; for `deleted`, call before deleting the row. The content of a
    `deleted` version is empty, as in the memory-store API; its path is kept.
    With `preassigned=True` the caller has run `version_preassign` and saved
    the item with that `current_version_id`; the version takes that id.
    """
    version = _version_row(item=item, operation=operation, actor=actor,
                           pk=_version_id(item, preassigned=preassigned))
    version.save(force_insert=True)
    if operation != VersionOperation.DELETED and not preassigned:
        item.current_version_id = version.pk
        MemoryItem.objects.filter(pk=item.pk).update(current_version_id=version.pk)
    if operation != VersionOperation.DELETED:
        # Every content change writes a version, so this is the one place that
        # keeps the recall index in step (a deleted item's entry cascades).

        if operation == VersionOperation.CREATED:
            memory_entries_rebuild([item], new=True)  # nothing indexed yet: no look-up, no DELETE
        else:
            memory_entries_sync([item])
    return version


def _version_id(item: MemoryItem, *, preassigned: bool) -> str | None:
    """The id of the item's next version: the one `version_preassign` gave it
    (None if it gave none, which the INSERT refuses), or a new one."""
    return item.current_version_id if preassigned else new_memory_version_id()


def _version_row(*, item: MemoryItem, operation: str, actor: Actor, pk: str | None) -> MemoryVersion:
    """The version row, with id `pk`, for the item's state after `operation`."""
    deleted = operation == VersionOperation.DELETED
    # Built positionally (`new_object`): the pipeline builds one or two per
    # memory it writes, and keyword construction cost twice as much.
    return new_object(
        MemoryVersion,
        id=pk,
        workspace_id=item.workspace_id,
        memory_id=item.pk,
        store_id=item.store_id,
        operation=operation,
        version=item.version,
        content=None if deleted else item.content,
        content_sha256=None if deleted else item.content_sha256,
        content_size_bytes=None if deleted else item.content_size_bytes,
        path=item.path,
        attributes=snapshot_attributes(item),
        **actor.as_fields("actor"),
    )


def snapshot_attributes(item: MemoryItem) -> dict:
    """The item's fields as a version records them. `status` is the one a
    reader saw (`pending` while awaiting review, as the API reports it), not
    the compat column's `active`."""
    attributes = {name: getattr(item, name) for name in SNAPSHOT_FIELDS}
    if item.due_date is not None:
        attributes["due_date"] = item.due_date.isoformat()
    if item.lifecycle_status == LifecycleStatus.PENDING:
        attributes["status"] = REPORTED_PENDING
    return attributes


def attributes_to_fields(attributes: dict) -> dict:
    """A version's attributes as item fields (the inverse of `snapshot_attributes`)."""
    fields = dict(attributes)
    if fields.get("due_date"):
        fields["due_date"] = date.fromisoformat(fields["due_date"])
    if fields.get("status") == REPORTED_PENDING:
        fields["status"] = Status.ACTIVE
    return fields


def versions_build(*, items: Sequence[MemoryItem], operation: str, actor: Actor,
                   preassigned: bool = False) -> list[MemoryVersion]:
    """The version rows `versions_record_bulk` writes, unsaved, for a caller
    that inserts them with other rows of its own in one statement. With
    `preassigned=True` they take the items' ids from `version_preassign`;
    otherwise the items are pointed at them (`current_version_id`)."""
    versions = [_version_row(item=item, operation=operation, actor=actor, pk=_version_id(item, preassigned=preassigned))
                for item in items]
    if not preassigned and operation != VersionOperation.DELETED:
        for item, version in zip(items, versions, strict=True):
            item.current_version_id = version.pk
    return versions


def versions_record_bulk(*, items: Sequence[MemoryItem], operation: str, actor: Actor,
                         preassigned: bool = False) -> list[MemoryVersion]:
    """`version_record` for many items in one INSERT (batch status, batch delete,
    the pipeline's bulk creates).

    Sets `current_version_id` on the item objects but does not save them: the
    caller's own `bulk_update` of the items carries it (one UPDATE instead of
    one per item). With `preassigned=True` the items were saved already with
    ids from `version_preassign`, which the versions take. Same locking
    contract as `version_record`.
    """
    versions = versions_build(items=items, operation=operation, actor=actor, preassigned=preassigned)
    insert_objects(versions)
    return versions


def _redact_rows(versions: Iterable[MemoryVersion], actor: Actor) -> tuple[list[MemoryVersion], list[str]]:
    """Clear the given (locked) versions; returns them and the texts they held."""
    now = timezone.now()
    texts: list[str] = []
    done: list[MemoryVersion] = []
    for version in versions:
        if version.redacted_at is not None:
            done.append(version)
            continue
        texts.extend(text for text in (version.content, version.path) if text)
        version.content = None
        version.content_sha256 = None
        version.content_size_bytes = None
        version.path = None
        version.redacted_at = now
        for field, value in actor.as_fields("redacted_by").items():
            setattr(version, field, value)
        done.append(version)
    changed = [version for version in done if version.redacted_at == now]
    if changed:
        MemoryVersion.objects.bulk_update(changed, _REDACTION_FIELDS)
    return done, texts


def memory_version_redact(*, workspace, version_id: str, actor: Actor, store_id: str | None = None) -> MemoryVersion:
    """Clear a version's content, hash, size and path for good; actor and times stay.

    Copies of the text elsewhere (admin log, job payloads and errors, the search
    index) are scrubbed in the same transaction. The head version of a live
    memory cannot be redacted on its own: the memory would still show that
    content. Replace the content first (which writes a new head) and then
    redact the old version, or delete the memory.
    """
    with transaction.atomic():
        filters = {"workspace": workspace, "pk": version_id}
        if store_id is not None:
            filters["store_id"] = store_id
        version = MemoryVersion.objects.select_for_update().filter(**filters).first()
        if version is None:
            raise NotFoundError(f"No memory version '{version_id}'.")
        if version.redacted_at is not None:
            return version
        head = MemoryItem.objects.filter(pk=version.memory_id, current_version_id=version.pk).exists()
        if head:
            raise ConflictError(
                "This is the current version of a live memory; update or delete the memory before redacting it."
            )
        (version,), texts = _redact_rows([version], actor)
        redaction_scrub(workspace=workspace, texts=texts, memory_ids=[version.memory_id])
    return version


def memory_versions_redact(
    *, workspace, memory_id: str, actor: Actor, version_ids: Iterable[str] | None = None
) -> list[MemoryVersion]:
    """Redact every version of a memory except its live head (or only `version_ids`
    among them), then scrub copies of their text once. Returns the versions
    redacted now or before; the head of a live memory is never among them (an
    explicitly named head raises ConflictError, as in `memory_version_redact`)."""
    with transaction.atomic():
        rows = MemoryVersion.objects.select_for_update().filter(workspace=workspace, memory_id=memory_id)
        if version_ids is not None:
            wanted = set(version_ids)
            rows = rows.filter(pk__in=wanted)
        versions = list(rows.order_by("pk"))
        if version_ids is not None:
            missing = wanted - {version.pk for version in versions}
            if missing:
                raise NotFoundError(f"No memory version '{sorted(missing)[0]}' for memory '{memory_id}'.")
        elif not versions:
            raise NotFoundError(f"No memory '{memory_id}'.")
        head_id = (
            MemoryItem.objects.filter(pk=memory_id, workspace=workspace)
            .values_list("current_version_id", flat=True)
            .first()
        )
        if head_id is not None:
            if version_ids is not None and head_id in wanted:
                raise ConflictError(
                    "This is the current version of a live memory; update or delete the memory before redacting it."
                )
            versions = [version for version in versions if version.pk != head_id]
        done, texts = _redact_rows(versions, actor)
        redaction_scrub(workspace=workspace, texts=texts, memory_ids=[memory_id])
    return done


def deleted_memories_versions_redact(*, workspace, memory_ids: Iterable[str], actor: Actor) -> int:
    """Redact every version of these memories once they are deleted (lineage
    erasure removes derived memories for good: no old version may keep their
    text), then scrub copies of the texts once for the whole set. Versions of
    a memory that is still live are left alone. Call inside the deletion's
    transaction. Returns the number of versions redacted now."""
    memory_ids = list(memory_ids)
    if not memory_ids:
        return 0
    live = set(MemoryItem.objects.filter(workspace=workspace, pk__in=memory_ids).values_list("pk", flat=True))
    gone = [memory_id for memory_id in memory_ids if memory_id not in live]
    versions = list(
        MemoryVersion.objects.select_for_update()
        .filter(workspace=workspace, memory_id__in=gone, redacted_at__isnull=True)
        .order_by("pk")
    )
    _done, texts = _redact_rows(versions, actor)
    redaction_scrub(workspace=workspace, texts=texts, memory_ids=gone)
    return len(versions)


def versions_purge_expired(*, now: datetime | None = None) -> int:
    """Delete the versions of memories deleted more than
    `MEMORY_VERSION_RETENTION_DAYS` ago (a memory counts as deleted when its row
    is gone; the age is that of its newest version, so a memory restored and
    deleted again starts a new period). Versions of live memories are kept.
    A retention of 0 or less keeps everything. Returns the number of versions
    deleted."""
    days = settings.MEMORY_VERSION_RETENTION_DAYS
    if days <= 0:
        return 0
    cutoff = (now or timezone.now()) - timedelta(days=days)
    expired = (
        MemoryVersion.objects.values("memory_id")
        .annotate(newest=Max("created_at"))
        .filter(newest__lt=cutoff)
        .exclude(memory_id__in=MemoryItem.objects.values("pk"))
        .values_list("memory_id", flat=True)
    )
    memory_ids = list(expired)
    purged = 0
    for start in range(0, len(memory_ids), PURGE_BATCH_MEMORIES):
        chunk = memory_ids[start : start + PURGE_BATCH_MEMORIES]
        with transaction.atomic():
            # Re-check under the transaction: a restore may have recreated one.
            live = set(MemoryItem.objects.filter(pk__in=chunk).values_list("pk", flat=True))
            purged += MemoryVersion.objects.filter(memory_id__in=[m for m in chunk if m not in live]).delete()[0]
    return purged
