"""The one version history and the one redaction path, shared by spec 003's
items and the stores' documents.

Every create / modify / delete of a `MemoryItem` ends with `version_record`
inside the caller's transaction, so the item row and its version commit
together or not at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from memories.models import MemoryItem, MemoryVersion, VersionOperation
from memory_project.errors import ConflictError, NotFoundError

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
    "source_job_id",
    "status",
    "lifecycle_status",
    "token_count_estimate",
    "coverage_start_floor_no",
    "coverage_end_floor_no",
    "derived_from_count",
)


def content_fingerprint(content: str) -> tuple[str, int]:
    """(lowercase hex SHA-256, size in bytes) of the UTF-8 content, no normalization."""
    data = content.encode("utf-8")
    return hashlib.sha256(data).hexdigest(), len(data)


def lock_memory_items(*, workspace, ids: Iterable[str]) -> dict[str, MemoryItem]:
    """Lock the workspace's items with these ids, in primary-key order (so two
    transactions locking overlapping sets cannot deadlock). Call inside
    `transaction.atomic()`; missing ids are simply absent from the result."""
    rows = (
        MemoryItem.objects.select_for_update()
        .filter(workspace=workspace, pk__in=list(ids))
        .order_by("pk")
    )
    return {row.pk: row for row in rows}


def lock_memory_item(*, workspace, memory_id: str) -> MemoryItem:
    """The locked item, or NotFoundError. Call inside `transaction.atomic()`."""
    item = lock_memory_items(workspace=workspace, ids=[memory_id]).get(memory_id)
    if item is None:
        raise NotFoundError(f"No memory '{memory_id}'.")
    return item


def version_record(*, item: MemoryItem, operation: str, actor: Actor) -> MemoryVersion:
    """Write the immutable version for the item's state after `operation` and
    point the item at it.

    The caller holds the item's lock (or has just created it) inside a
    transaction; for `deleted`, call before deleting the row. The content of a
    `deleted` version is empty, as in the memory-store API; its path is kept.
    """
    deleted = operation == VersionOperation.DELETED
    version = MemoryVersion.objects.create(
        workspace_id=item.workspace_id,
        memory_id=item.pk,
        store_id=item.store_id,
        operation=operation,
        version=item.version,
        content=None if deleted else item.content,
        content_sha256=None if deleted else item.content_sha256,
        content_size_bytes=None if deleted else item.content_size_bytes,
        path=item.path,
        attributes={name: getattr(item, name) for name in SNAPSHOT_FIELDS},
        **actor.as_fields("actor"),
    )
    if not deleted:
        item.current_version_id = version.pk
        MemoryItem.objects.filter(pk=item.pk).update(current_version_id=version.pk)
    return version


def memory_version_redact(*, workspace, version_id: str, actor: Actor, store_id: str | None = None) -> MemoryVersion:
    """Clear a version's content, hash, size and path for good; actor and times stay.

    The head version of a live memory cannot be redacted on its own: the memory
    would still show that content. Replace the content first (which writes a new
    head) and then redact the old version, or delete the memory.
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
        version.content = None
        version.content_sha256 = None
        version.content_size_bytes = None
        version.path = None
        version.redacted_at = timezone.now()
        for field, value in actor.as_fields("redacted_by").items():
            setattr(version, field, value)
        version.save(
            update_fields=[
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
        )
    return version
