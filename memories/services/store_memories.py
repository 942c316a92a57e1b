"""Writes of a store's memories (path-addressed documents) and their versions.

A store document is a `MemoryItem` with scope `store`, type `document`,
`scope_id` = the store id. Every write locks the store row first (see
`lock_memory_store`), then the item, then writes the item and its immutable
version in one transaction through `memories.services.versioning`.

Rewriting a memory with the content (and path) it already has changes nothing:
no version is written and `updated_at` stays, so an agent that saves the same
notes twice does not flood the history.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import IntegrityError, transaction

from accounts.actors import Actor
from memories.models import MAX_CONTENT_BYTES, MemoryItem, MemoryStore, MemoryType, Scope, VersionOperation
from memories.paths import normalize_path
from memories.services.stores import ensure_store_writable, lock_memory_store
from memories.services.versioning import content_fingerprint, lock_memory_item, memory_version_redact, version_record
from memory_project.errors import ConflictError, NotFoundError, PreconditionFailedError, ValidationError

_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")
# A failed precondition or a taken path answers the same on a retry, so tell the
# `anthropic` SDK (which retries 409s by default) not to.
NO_RETRY = {"x-should-retry": "false"}
UNSET: Any = object()


def clean_content(content: Any) -> str:
    """Text content (a string, or `{"text": ...}`) of at most 102,400 UTF-8 bytes."""
    if isinstance(content, dict) and set(content) == {"text"}:
        content = content["text"]
    if not isinstance(content, str):
        raise ValidationError("content must be a string.")
    size = len(content.encode("utf-8", errors="strict"))
    if size > MAX_CONTENT_BYTES:
        raise ValidationError(f"content is {size} bytes; a memory holds at most {MAX_CONTENT_BYTES} bytes.")
    return content


def clean_sha256(value: Any, *, field: str) -> str:
    if not isinstance(value, str) or not _SHA256_HEX.match(value):
        raise ValidationError(f"{field} must be 64 lowercase hexadecimal characters.")
    return value


def clean_precondition(raw: Any, *, allowed: tuple[str, ...]) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or raw.get("type") not in allowed:
        raise ValidationError(f"precondition.type must be one of: {', '.join(allowed)}.")
    if raw["type"] == "content_sha256":
        return {"type": "content_sha256", "content_sha256": clean_sha256(raw.get("content_sha256"), field="precondition.content_sha256")}
    return {"type": raw["type"]}


def _check_hash(item: MemoryItem, expected: str) -> None:
    if item.content_sha256 != expected:
        raise PreconditionFailedError(
            f"Memory '{item.pk}' has content_sha256 {item.content_sha256}, not {expected}: re-read it and retry.",
            headers=NO_RETRY,
        )


def _store_item(*, store: MemoryStore, memory_id: str) -> MemoryItem:
    """The store's memory, locked. Relies on the caller's transaction."""
    item = lock_memory_item(workspace=store.workspace_id, memory_id=memory_id)
    if item.store_id != store.pk:
        raise NotFoundError(f"No memory '{memory_id}' in memory store '{store.pk}'.")
    return item


def _path_taken(*, store: MemoryStore, path: str, exclude_id: str | None = None) -> bool:
    qs = MemoryItem.objects.filter(store=store, path=path)
    if exclude_id is not None:
        qs = qs.exclude(pk=exclude_id)
    return qs.exists()


def _modify(item: MemoryItem, *, content: str | None, path: str | None, actor: Actor) -> bool:
    """Apply a new content and/or path and write a `modified` version; False when
    nothing differs. Relies on the caller holding the item's lock."""
    fields: list[str] = []
    if content is not None and content != item.content:
        item.content = content
        item.content_sha256, item.content_size_bytes = content_fingerprint(content)
        fields += ["content", "content_sha256", "content_size_bytes"]
    if path is not None and path != item.path:
        item.path = path
        fields.append("path")
    if not fields:
        return False
    item.version += 1
    item.save(update_fields=[*fields, "version", "updated_at"])
    version_record(item=item, operation=VersionOperation.MODIFIED, actor=actor)
    return True


def _create(*, store: MemoryStore, path: str, content: str, actor: Actor) -> MemoryItem:
    sha, size = content_fingerprint(content)
    item = MemoryItem(
        workspace_id=store.workspace_id,
        scope=Scope.STORE,
        scope_id=store.pk,
        type=MemoryType.DOCUMENT,
        store=store,
        path=path,
        content=content,
        content_sha256=sha,
        content_size_bytes=size,
        version=1,
    )
    try:
        # A savepoint, so a unique-path violation (a writer that bypassed the
        # store lock) leaves the outer transaction usable and answers 409.
        with transaction.atomic():
            item.save(force_insert=True)
    except IntegrityError:
        raise ConflictError(f"A memory already exists at '{path}'.", headers=NO_RETRY)
    version_record(item=item, operation=VersionOperation.CREATED, actor=actor)
    return item


def store_memory_write(
    *, workspace, store_id: str, path: Any, content: Any, actor: Actor, precondition: Any = None
) -> tuple[MemoryItem, str | None]:
    """Upsert by path: create (version `created`) or replace the content
    (version `modified`). `precondition {"type": "not_exists"}` makes it
    create-only (409 `memory_precondition_failed` when the path is taken);
    `{"type": "content_sha256", ...}` makes it replace-only and conditional.
    Returns the memory and the operation written (None for an identical rewrite).
    """
    path = normalize_path(path)
    content = clean_content(content)
    precondition = clean_precondition(precondition, allowed=("not_exists", "content_sha256"))
    with transaction.atomic():
        store = lock_memory_store(workspace=workspace, store_id=store_id)
        ensure_store_writable(store)
        item = MemoryItem.objects.select_for_update().filter(store=store, path=path).first()
        if item is None:
            if precondition and precondition["type"] == "content_sha256":
                raise PreconditionFailedError(f"No memory exists at '{path}'.", headers=NO_RETRY)
            return _create(store=store, path=path, content=content, actor=actor), VersionOperation.CREATED
        if precondition and precondition["type"] == "not_exists":
            raise PreconditionFailedError(f"A memory already exists at '{path}' ({item.pk}).", headers=NO_RETRY)
        if precondition:
            _check_hash(item, precondition["content_sha256"])
        changed = _modify(item, content=content, path=None, actor=actor)
        return item, VersionOperation.MODIFIED if changed else None


def store_memory_update(
    *, workspace, store_id: str, memory_id: str, actor: Actor, content: Any = UNSET, path: Any = UNSET,
    precondition: Any = None,
) -> MemoryItem:
    """Change the content and/or the path (a rename keeps the id) of a memory.

    `precondition {"type": "content_sha256"}` always refers to the current
    content, even when renaming; a mismatch is 409 `memory_precondition_failed`.
    Renaming onto a taken path is 409 `conflict_error`, unless the precondition
    is `{"type": "not_exists"}`, which turns that case into a no-op.
    """
    new_content = None if content is UNSET or content is None else clean_content(content)
    new_path = None if path is UNSET or path is None else normalize_path(path)
    precondition = clean_precondition(precondition, allowed=("content_sha256", "not_exists"))
    with transaction.atomic():
        store = lock_memory_store(workspace=workspace, store_id=store_id)
        ensure_store_writable(store)
        item = _store_item(store=store, memory_id=memory_id)
        if precondition and precondition["type"] == "content_sha256":
            _check_hash(item, precondition["content_sha256"])
        if new_path is not None and new_path != item.path and _path_taken(store=store, path=new_path, exclude_id=item.pk):
            if precondition and precondition["type"] == "not_exists":
                return item
            raise ConflictError(f"A memory already exists at '{new_path}'.", headers=NO_RETRY)
        _modify(item, content=new_content, path=new_path, actor=actor)
    return item


def store_memory_put(*, workspace, store_id: str, memory_id: str, content: Any, version: Any, actor: Actor) -> MemoryItem:
    """Spec 001's optimistic update: replace the content when `version` is the
    memory's current version; a stale version is 409 and changes nothing."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValidationError("version must be a positive integer (the memory's current version).")
    content = clean_content(content)
    with transaction.atomic():
        store = lock_memory_store(workspace=workspace, store_id=store_id)
        ensure_store_writable(store)
        item = _store_item(store=store, memory_id=memory_id)
        if item.version != version:
            raise PreconditionFailedError(
                f"Memory '{item.pk}' is at version {item.version}, not {version}: re-read it and retry.",
                headers=NO_RETRY,
            )
        _modify(item, content=content, path=None, actor=actor)
    return item


def store_memory_delete(
    *, workspace, store_id: str, memory_id: str, actor: Actor, expected_content_sha256: str | None = None
) -> str:
    """Delete a memory (allowed in an archived store), writing a `deleted`
    version; earlier versions stay. A hash mismatch is 409 and deletes nothing."""
    if expected_content_sha256 not in (None, ""):
        expected_content_sha256 = clean_sha256(expected_content_sha256, field="expected_content_sha256")
    with transaction.atomic():
        store = lock_memory_store(workspace=workspace, store_id=store_id)
        item = _store_item(store=store, memory_id=memory_id)
        if expected_content_sha256:
            _check_hash(item, expected_content_sha256)
        item.version += 1
        version_record(item=item, operation=VersionOperation.DELETED, actor=actor)
        item.delete()
    return memory_id


def store_version_redact(*, workspace, store_id: str, version_id: str, actor: Actor):
    """Redact one of the store's versions (allowed in an archived store)."""
    if not MemoryStore.objects.filter(workspace=workspace, pk=store_id).exists():
        raise NotFoundError(f"No memory store '{store_id}'.")
    try:
        return memory_version_redact(workspace=workspace, version_id=version_id, actor=actor, store_id=store_id)
    except ConflictError as exc:
        # Redacting a live memory's head version answers the same until the memory changes.
        raise ConflictError(exc.message, headers=NO_RETRY) from exc
