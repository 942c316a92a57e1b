"""Writes of spec 003's memory items: create, update, delete, restore, and
redact-and-replace. Every write locks the row (`lock_memory_item`) and ends
with a version in the same transaction. Field rules: `item_rules`.

Store documents (scope `store`) share the table: they can be read, deleted,
restored, redacted and have their status set from here, but their fields are
edited through the stores API, which owns paths and store preconditions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Min

import memories.services.item_rules as rules
from accounts.actors import Actor
from memories.models import (
    MAX_SCOPE_ID_CHARS,
    MemoryItem,
    MemoryJob,
    MemoryStore,
    MemoryType,
    MemoryVersion,
    Scope,
    VersionOperation,
)
from memories.services.stores import lock_writable_stores_of
from memories.services.supersession import facts_supersede_on_approval, is_approval
from memories.services.versioning import (
    SNAPSHOT_FIELDS,
    attributes_to_fields,
    content_fingerprint,
    lock_memory_item,
    lock_memory_items,
    memories_released_since_review,
    memory_versions_redact,
    version_preassign,
    version_record,
)
from memory_project.errors import ConflictError, NotFoundError, PreconditionFailedError, ValidationError
from memory_project.tokens import estimate_tokens

# Fields a client may change with PATCH (spec 003).
PUBLIC_FIELDS = (
    "scope",
    "scope_id",
    "type",
    "summary_tier",
    "content",
    "fact_key",
    "importance",
    "confidence",
    "source_floor_id",
    "source_message_id",
    "sources",
    "status",
    "lifecycle_status",
    "due_date",
    "metadata",
)
# Fields only the pipeline and the admin set.
INTERNAL_FIELDS = (
    "source_job",
    "token_count_estimate",
    "coverage_start_floor_no",
    "coverage_end_floor_no",
    "derived_from_count",
)
_UPDATE_FIELDS = PUBLIC_FIELDS + INTERNAL_FIELDS


def clean_scope_id(scope: str, value: Any) -> str:
    """Branch scope ids are `JSON.stringify([conversation_id, branch])`, stored in
    that exact compact form; global may be empty, other scopes may not."""
    if value is None:
        value = ""
    if not isinstance(value, str) or len(value) > MAX_SCOPE_ID_CHARS:
        raise ValidationError(f"scope_id: must be a string of at most {MAX_SCOPE_ID_CHARS} characters.")
    if scope != Scope.GLOBAL and not value:
        raise ValidationError(f"scope_id: required for scope '{scope}'.")
    if scope == Scope.BRANCH:
        try:
            parts = json.loads(value)
        except ValueError:
            parts = None
        if not (isinstance(parts, list) and len(parts) == 2 and all(isinstance(p, str) and p for p in parts)):
            raise ValidationError("scope_id: a branch scope id is JSON.stringify([conversation_id, branch_id]).")
        value = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
    return value


def _clean_source_job(workspace, job: Any) -> MemoryJob | None:
    if job is None:
        return None
    if isinstance(job, str):
        job = MemoryJob.objects.filter(pk=job).first()
    if not isinstance(job, MemoryJob) or job.workspace_id not in (None, workspace.pk):
        raise ValidationError("source_job: no such job in this workspace.")
    return job


def _check_coverage(item: MemoryItem) -> None:
    start, end = item.coverage_start_floor_no, item.coverage_end_floor_no
    if start is not None and end is not None and start > end:
        raise ValidationError("coverage_start_floor_no: must not be after coverage_end_floor_no.")


def check_preconditions(item: MemoryItem, *, expected_version: int | None, expected_content_sha256: str | None) -> None:
    if expected_version is not None and (isinstance(expected_version, bool) or not isinstance(expected_version, int)):
        raise ValidationError("expected_version: must be an integer.")
    if expected_content_sha256 is not None and not isinstance(expected_content_sha256, str):
        raise ValidationError("expected_content_sha256: must be a string.")
    if expected_version is not None and item.version != expected_version:
        raise PreconditionFailedError(
            f"Memory '{item.pk}' is at version {item.version}, not {expected_version}.",
            details={"current_version": item.version},
        )
    if expected_content_sha256 is not None and item.content_sha256 != expected_content_sha256:
        raise PreconditionFailedError(f"Memory '{item.pk}' content_sha256 does not match.")


def _set_content(item: MemoryItem, content: str, *, token_count_estimate: int | None = None) -> None:
    item.content = content
    item.content_sha256, item.content_size_bytes = content_fingerprint(content)
    item.token_count_estimate = (
        token_count_estimate if token_count_estimate is not None else estimate_tokens(content)
    )


def memory_item_create(
    *,
    workspace,
    actor: Actor,
    scope: str,
    type: str,  # noqa: A002 - spec 003's field name
    content: Any,
    scope_id: str = "",
    summary_tier: str | None = None,
    fact_key: str | None = None,
    importance: float = 0.5,
    confidence: float = 1.0,
    source_floor_id: str | None = None,
    source_message_id: str | None = None,
    sources: list[str] | None = None,
    status: str | None = None,
    lifecycle_status: str | None = None,
    due_date: str | None = None,
    metadata: Any = None,
    source_job: MemoryJob | str | None = None,
    token_count_estimate: int | None = None,
    coverage_start_floor_no: int | None = None,
    coverage_end_floor_no: int | None = None,
    derived_from_count: int | None = None,
) -> MemoryItem:
    """Create an item and its `created` version. Raises ValidationError (400) or
    ConflictError (409, an illegal status combination)."""
    scope = rules.clean_scope(scope)
    item_type = rules.clean_type(type)
    new_status, new_lifecycle = rules.resolve_statuses(
        current_status=None,
        current_lifecycle=None,
        status=rules.clean_status(status) if status is not None else None,
        lifecycle=rules.clean_lifecycle(lifecycle_status) if lifecycle_status is not None else None,
        actor=actor,
    )
    item = MemoryItem(
        workspace=workspace,
        scope=scope,
        scope_id=clean_scope_id(scope, scope_id),
        type=item_type,
        summary_tier=rules.clean_summary_tier(summary_tier) if item_type == MemoryType.SUMMARY else None,
        fact_key=rules.normalize_fact_key(fact_key) if item_type == MemoryType.FACT else None,
        due_date=rules.clean_due_date(due_date) if item_type == MemoryType.OPEN_LOOP else None,
        metadata=rules.clean_metadata(metadata),
        importance=rules.clean_unit_float("importance", importance),
        confidence=rules.clean_unit_float("confidence", confidence),
        source_floor_id=rules.clean_optional_text("source_floor_id", source_floor_id, rules.MAX_SOURCE_ID_CHARS),
        source_message_id=rules.clean_optional_text("source_message_id", source_message_id, rules.MAX_SOURCE_ID_CHARS),
        source_job=_clean_source_job(workspace, source_job),
        sources=rules.clean_sources(sources),
        status=new_status,
        lifecycle_status=new_lifecycle,
        coverage_start_floor_no=rules.clean_optional_count("coverage_start_floor_no", coverage_start_floor_no),
        coverage_end_floor_no=rules.clean_optional_count("coverage_end_floor_no", coverage_end_floor_no),
        derived_from_count=rules.clean_optional_count("derived_from_count", derived_from_count),
    )
    _set_content(
        item,
        rules.clean_content(content),
        token_count_estimate=rules.clean_optional_count("token_count_estimate", token_count_estimate),
    )
    _check_coverage(item)
    version_preassign(item)
    with transaction.atomic():
        item.save(force_insert=True)
        version_record(item=item, operation=VersionOperation.CREATED, actor=actor, preassigned=True)
    return item


def _apply_changes(item: MemoryItem, changes: Mapping[str, Any], *, workspace, actor: Actor) -> list[str]:
    """Apply validated `changes` to the (locked) item; returns the changed field names."""
    before = {name: getattr(item, name) for name in (*SNAPSHOT_FIELDS, "content")}
    if "type" in changes:
        item.type = rules.clean_type(changes["type"])
    if "scope" in changes:
        item.scope = rules.clean_scope(changes["scope"])
    if "scope" in changes or "scope_id" in changes:
        item.scope_id = clean_scope_id(item.scope, changes.get("scope_id", item.scope_id))
    if item.type != MemoryType.SUMMARY:
        item.summary_tier = None
    elif "summary_tier" in changes:
        item.summary_tier = rules.clean_summary_tier(changes["summary_tier"])
    if item.type != MemoryType.FACT:
        item.fact_key = None
    elif "fact_key" in changes:
        item.fact_key = rules.normalize_fact_key(changes["fact_key"])
    if item.type != MemoryType.OPEN_LOOP:
        item.due_date = None
    elif "due_date" in changes:
        item.due_date = rules.clean_due_date(changes["due_date"])
    for name in ("importance", "confidence"):
        if name in changes:
            setattr(item, name, rules.clean_unit_float(name, changes[name]))
    for name in ("source_floor_id", "source_message_id"):
        if name in changes:
            setattr(item, name, rules.clean_optional_text(name, changes[name], rules.MAX_SOURCE_ID_CHARS))
    if "sources" in changes:
        item.sources = rules.clean_sources(changes["sources"])
    if "metadata" in changes:
        item.metadata = rules.clean_metadata(changes["metadata"])
    for name in ("coverage_start_floor_no", "coverage_end_floor_no", "derived_from_count", "token_count_estimate"):
        if name in changes:
            setattr(item, name, rules.clean_optional_count(name, changes[name]))
    if "source_job" in changes:
        item.source_job = _clean_source_job(workspace, changes["source_job"])
    if "content" in changes:
        explicit_tokens = item.token_count_estimate if "token_count_estimate" in changes else None
        _set_content(item, rules.clean_content(changes["content"]), token_count_estimate=explicit_tokens)
    item.status, item.lifecycle_status = rules.resolve_statuses(
        current_status=item.status,
        current_lifecycle=item.lifecycle_status,
        status=rules.clean_status(changes["status"]) if "status" in changes else None,
        lifecycle=rules.clean_lifecycle(changes["lifecycle_status"]) if "lifecycle_status" in changes else None,
        actor=actor,
        never_released=lambda: item.pk not in memories_released_since_review(workspace=workspace, ids=[item.pk]),
    )
    _check_coverage(item)
    changed = [name for name, old in before.items() if getattr(item, name) != old]
    if "content" in changed:
        changed += ["content_sha256", "content_size_bytes"]
    if "token_count_estimate" in changed or "content" in changed:
        changed.append("token_count_estimate")
    return list(dict.fromkeys(changed))


def _save_modified(item: MemoryItem, changed: list[str], actor: Actor) -> None:
    item.version += 1
    version_preassign(item)
    item.save(update_fields=[*changed, "version", "current_version_id", "updated_at"])
    version_record(item=item, operation=VersionOperation.MODIFIED, actor=actor, preassigned=True)


def memory_item_update(
    *,
    workspace,
    actor: Actor,
    memory_id: str,
    changes: Mapping[str, Any],
    expected_version: int | None = None,
    expected_content_sha256: str | None = None,
) -> MemoryItem:
    """Apply a partial update (keys of `PUBLIC_FIELDS` / `INTERNAL_FIELDS`) and
    write a `modified` version. A write that changes nothing writes no version.
    Raises NotFoundError, ValidationError, ConflictError, PreconditionFailedError."""
    unknown = sorted(set(changes) - set(_UPDATE_FIELDS))
    if unknown:
        raise ValidationError(f"{unknown[0]}: not a writable field.")
    if not changes:
        raise ValidationError("Provide at least one field to update.")
    with transaction.atomic():
        item = lock_memory_item(workspace=workspace, memory_id=memory_id)
        if item.scope == Scope.STORE:
            raise ConflictError(f"Memory '{memory_id}' is a memory-store document; edit it through /v1/memory_stores.")
        check_preconditions(item, expected_version=expected_version, expected_content_sha256=expected_content_sha256)
        before = item.lifecycle_status
        changed = _apply_changes(item, changes, workspace=workspace, actor=actor)
        if changed:
            _save_modified(item, changed, actor)
            if is_approval(before=before, after=item.lifecycle_status):
                facts_supersede_on_approval(workspace=workspace, approved=[item], actor=actor)
    return item


def memory_item_delete(
    *,
    workspace,
    actor: Actor,
    memory_id: str,
    expected_version: int | None = None,
    expected_content_sha256: str | None = None,
) -> str:
    """Delete the item (its edges go with it) after writing its `deleted` version.
    Earlier versions stay until redacted or purged by retention."""
    with transaction.atomic():
        item = lock_memory_item(workspace=workspace, memory_id=memory_id)
        check_preconditions(item, expected_version=expected_version, expected_content_sha256=expected_content_sha256)
        item.version += 1
        version_record(item=item, operation=VersionOperation.DELETED, actor=actor)
        item.delete()
    return memory_id


def _check_path_free(item: MemoryItem) -> None:
    """A restored document's path must be free in its store. Checked before the
    write, under the store lock, rather than left to the unique index: a failed
    INSERT or UPDATE is logged by PostgreSQL with its statement, and so with
    the memory's content."""
    if item.store_id is None or not item.path:
        return
    if MemoryItem.objects.filter(store_id=item.store_id, path=item.path).exclude(pk=item.pk).exists():
        raise ConflictError(f"Path '{item.path}' is taken by another memory in this store.")


def memory_item_restore(*, workspace, actor: Actor, memory_id: str, version_id: str) -> MemoryItem:
    """Bring back the content and fields of one version as a new version.

    A live memory gets a `modified` version. A deleted memory is recreated with
    the same id (and its original `created_at`) and gets a `created` version;
    its edges are not restored. Redacted versions and `deleted` markers hold no
    content and cannot be restored (409); a store document whose path has been
    taken meanwhile is a 409 too. Restoring never approves a pending memory.
    """
    with transaction.atomic():
        # Every version of the memory, locked in key order: two restores of one
        # deleted memory (from different versions) queue here rather than race
        # to re-insert its row.
        versions = MemoryVersion.objects.select_for_update().filter(workspace=workspace, memory_id=memory_id)
        version = next((row for row in versions.order_by("pk") if row.pk == version_id), None)
        if version is None:
            raise NotFoundError(f"No version '{version_id}' of memory '{memory_id}'.")
        if version.redacted_at is not None:
            raise ConflictError(f"Version '{version_id}' was redacted; its content is gone.")
        if version.operation == VersionOperation.DELETED or version.content is None:
            raise ConflictError(f"Version '{version_id}' records a deletion; restore an earlier version.")
        lock_writable_stores_of(workspace=workspace, memory_ids=[memory_id])
        item = lock_memory_items(workspace=workspace, ids=[memory_id]).get(memory_id)
        attributes = attributes_to_fields(version.attributes)
        job_id = attributes.pop("source_job_id", None)
        if job_id and not MemoryJob.objects.filter(pk=job_id).exists():
            job_id = None
        if item is not None:
            before = item.status, item.lifecycle_status
            for name, value in attributes.items():
                setattr(item, name, value)
            item.source_job_id = job_id
            if item.lifecycle_status in rules.RELEASED_LIFECYCLES and actor.kind not in rules.APPROVER_KINDS:
                unapproved = before[1] == "pending" or (
                    before[1] == "deprecated"
                    and item.pk not in memories_released_since_review(workspace=workspace, ids=[item.pk])
                )
                if unapproved:
                    # Restoring content never approves: the memory keeps its review state.
                    item.status, item.lifecycle_status = before
            item.path = version.path if item.scope == Scope.STORE else item.path
            _check_path_free(item)
            _set_content(item, version.content, token_count_estimate=attributes.get("token_count_estimate"))
            item.version += 1
            try:
                with transaction.atomic():
                    item.save()
            except IntegrityError:
                raise ConflictError(f"Path '{version.path}' is taken by another memory in this store.")
            version_record(item=item, operation=VersionOperation.MODIFIED, actor=actor)
            return item
        if version.store_id is not None:
            store = MemoryStore.objects.select_for_update().filter(pk=version.store_id).first()
            if store is None or store.archived_at is not None:
                raise ConflictError("The memory's store is gone or archived; it cannot be restored.")
        latest = MemoryVersion.objects.filter(workspace=workspace, memory_id=memory_id).order_by("-version").first()
        item = MemoryItem(id=memory_id, workspace=workspace, store_id=version.store_id, path=version.path, **attributes)
        _check_path_free(item)
        item.source_job_id = job_id
        _set_content(item, version.content, token_count_estimate=attributes.get("token_count_estimate"))
        item.version = latest.version + 1
        try:
            with transaction.atomic():
                item.save(force_insert=True)
        except IntegrityError:
            raise ConflictError(f"Path '{version.path}' is taken by another memory in this store.")
        created = MemoryVersion.objects.filter(workspace=workspace, memory_id=memory_id).aggregate(at=Min("created_at"))
        MemoryItem.objects.filter(pk=memory_id).update(created_at=created["at"])
        item.refresh_from_db(fields=["created_at"])
        version_record(item=item, operation=VersionOperation.CREATED, actor=actor)
        return item


def memory_redact_and_replace(
    *,
    workspace,
    actor: Actor,
    memory_id: str,
    content: Any,
    expected_version: int | None = None,
) -> tuple[MemoryItem, list[MemoryVersion]]:
    """Replace the live content with `content`, then redact every earlier version
    of the memory (whatever they held) and scrub copies of their text. For the
    admin's "redact and replace"; works for store documents too (path kept)."""
    new_content = rules.clean_content(content)
    with transaction.atomic():
        lock_writable_stores_of(workspace=workspace, memory_ids=[memory_id])
        item = lock_memory_item(workspace=workspace, memory_id=memory_id)
        check_preconditions(item, expected_version=expected_version, expected_content_sha256=None)
        if new_content == item.content:
            raise ValidationError("content: the replacement must differ from the current content.")
        _set_content(item, new_content)
        _save_modified(item, ["content", "content_sha256", "content_size_bytes", "token_count_estimate"], actor)
        redacted = memory_versions_redact(workspace=workspace, memory_id=memory_id, actor=actor)
    return item, redacted
