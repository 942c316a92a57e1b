"""Writes of memory stores: create, update, archive, delete, and the store lock.

An archived store is read-and-delete only: updating it or writing its memories
(through the stores API, or through the memory-item routes that reach store
documents: batch status, restore, redact-and-replace) fails with 400
`invalid_request_error` (what the `anthropic` SDK documents for an archived
store); reading, deleting memories, redacting versions and deleting the store
still work.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone

from memories.models import MemoryItem, MemoryStore
from memory_project.errors import NotFoundError, ValidationError

MAX_NAME_CHARS = 255
MAX_DESCRIPTION_CHARS = 1024
MAX_METADATA_PAIRS = 16
MAX_METADATA_KEY_CHARS = 64
MAX_METADATA_VALUE_CHARS = 512


def lock_memory_store(*, workspace, store_id: str) -> MemoryStore:
    """The workspace's store, locked until the transaction ends, or NotFoundError.

    Every write of a store's memories takes this lock first, so an archive (or a
    store delete) cannot slip between a write's check and its commit, and two
    writers of one path queue here instead of racing on the unique constraint.
    Call inside `transaction.atomic()`.
    """
    store = MemoryStore.objects.select_for_update().filter(workspace=workspace, pk=store_id).first()
    if store is None:
        raise NotFoundError(f"No memory store '{store_id}'.")
    return store


def ensure_store_writable(store: MemoryStore) -> None:
    if store.archived_at is not None:
        raise ValidationError(f"Memory store '{store.pk}' is archived: it can be read and deleted, not written.")


def lock_writable_stores_of(*, workspace, memory_ids: Iterable[str]) -> None:
    """For writes that reach store documents from outside the stores API (batch
    status, restore, redact-and-replace): lock the stores of these memories and
    refuse (ValidationError) if one is archived. One statement, which finds no
    row for ordinary items. Call inside `transaction.atomic()`, before locking
    the memories: store writes lock the store first, then its memory, and so
    must everyone else."""
    stores = MemoryStore.objects.select_for_update().filter(
        pk__in=MemoryItem.objects.filter(workspace=workspace, pk__in=list(memory_ids), store__isnull=False).values(
            "store_id"
        )
    ).order_by("pk")
    for store in stores:
        ensure_store_writable(store)


def _clean_name(name: Any) -> str:
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME_CHARS:
        raise ValidationError(f"name must be a string of 1 to {MAX_NAME_CHARS} characters.")
    if any(unicodedata.category(char) == "Cc" for char in name):
        raise ValidationError("name must not contain control characters.")
    return name


def _clean_description(description: Any) -> str:
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION_CHARS:
        raise ValidationError(f"description must be a string of at most {MAX_DESCRIPTION_CHARS} characters.")
    return description


def _check_metadata(metadata: dict[str, str]) -> None:
    if len(metadata) > MAX_METADATA_PAIRS:
        raise ValidationError(f"metadata may hold at most {MAX_METADATA_PAIRS} key-value pairs.")
    for key, value in metadata.items():
        if not 1 <= len(key) <= MAX_METADATA_KEY_CHARS:
            raise ValidationError(f"metadata keys must be 1 to {MAX_METADATA_KEY_CHARS} characters.")
        if not isinstance(value, str) or len(value) > MAX_METADATA_VALUE_CHARS:
            raise ValidationError(
                f"metadata['{key}'] must be a string of at most {MAX_METADATA_VALUE_CHARS} characters."
            )


def _metadata_patch(metadata: Any, *, allow_null_values: bool) -> dict[str, str | None]:
    if not isinstance(metadata, dict):
        raise ValidationError("metadata must be an object of string keys and string values.")
    for key, value in metadata.items():
        if value is None and allow_null_values:
            continue
        if not isinstance(value, str):
            raise ValidationError(f"metadata['{key}'] must be a string{' or null' if allow_null_values else ''}.")
    return metadata


def memory_store_create(*, workspace, name: Any, description: Any = "", metadata: Any = None) -> MemoryStore:
    metadata = _metadata_patch({} if metadata is None else metadata, allow_null_values=False)
    _check_metadata(metadata)
    store = MemoryStore(
        workspace=workspace,
        name=_clean_name(name),
        description=_clean_description("" if description is None else description),
        metadata=metadata,
    )
    with transaction.atomic():
        store.save()
    return store


def memory_store_update(
    *, workspace, store_id: str, name: Any = None, description: Any = None, metadata: Any = None
) -> MemoryStore:
    """Apply the given changes; `None` leaves a field as it is, and a metadata key
    set to `None` is removed. The merged metadata must still fit the limits."""
    with transaction.atomic():
        store = lock_memory_store(workspace=workspace, store_id=store_id)
        ensure_store_writable(store)
        fields: list[str] = []
        if name is not None:
            store.name = _clean_name(name)
            fields.append("name")
        if description is not None:
            store.description = _clean_description(description)
            fields.append("description")
        if metadata is not None:
            merged = dict(store.metadata)
            for key, value in _metadata_patch(metadata, allow_null_values=True).items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            _check_metadata(merged)
            store.metadata = merged
            fields.append("metadata")
        if fields:
            store.save(update_fields=[*fields, "updated_at"])
    return store


def memory_store_archive(*, workspace, store_id: str) -> MemoryStore:
    """Archive for good; archiving an archived store returns it unchanged."""
    with transaction.atomic():
        store = lock_memory_store(workspace=workspace, store_id=store_id)
        if store.archived_at is None:
            store.archived_at = timezone.now()
            store.save(update_fields=["archived_at", "updated_at"])
    return store


def memory_store_delete(*, workspace, store_id: str) -> str:
    """Delete the store with its memories, their versions and its attachments
    (all cascade from the store row). Returns the deleted id."""
    with transaction.atomic():
        store = lock_memory_store(workspace=workspace, store_id=store_id)
        store.delete()
    return store_id
