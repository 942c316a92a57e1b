"""The erasures of memory stores and expiry, through the same lineage as a
REST delete or redaction (`erase`): whichever way a store document is deleted
or a version redacted (the store API, the agent tools, LangGraph's store) and
when a memory expires, what was compacted from it goes too, the indexes drop
it and the erasure ends on disk (`memory_project.erasure`)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from accounts.actors import Actor
from memories.models import MemoryItem
from memories.services.lineage.erase import LineageReport, erase_items, indexes_purge, lineage_erase_memories
from memories.services.store_memories import store_memory_delete, store_version_redact


def _scopes(*, workspace, ids: Iterable[str]) -> set[tuple[str, str]]:
    return set(MemoryItem.objects.filter(workspace=workspace, pk__in=list(ids)).values_list("scope", "scope_id"))


def store_memory_delete_following_lineage(*, workspace, store_id: str, memory_id: str, actor: Actor,
                                          expected_content_sha256: str | None = None) -> str:
    """Delete a store document (`store_memory_delete`: a `deleted` version, the
    earlier ones stay until redacted) and erase what was compacted from it.
    Returns the memory id."""
    with transaction.atomic():
        scopes = _scopes(workspace=workspace, ids=[memory_id])
        store_memory_delete(workspace=workspace, store_id=store_id, memory_id=memory_id, actor=actor,
                            expected_content_sha256=expected_content_sha256)
        lineage_erase_memories(workspace=workspace, actor=actor, memory_ids=[memory_id], scopes=scopes)
        # The document's own terms leave the full-text indexes.
        indexes_purge()
    return memory_id


def store_version_redact_following_lineage(*, workspace, store_id: str, version_id: str, actor: Actor):
    """Redact one of a store's versions (`store_version_redact`) and erase what
    was compacted from its memory. Returns the version."""
    with transaction.atomic():
        version = store_version_redact(workspace=workspace, store_id=store_id, version_id=version_id, actor=actor)
        scopes = _scopes(workspace=workspace, ids=[version.memory_id])
        lineage_erase_memories(workspace=workspace, actor=actor, memory_ids=[version.memory_id], scopes=scopes)
        indexes_purge()
    return version


def memories_expire_following_lineage(*, workspace, ids: Iterable[str], actor: Actor) -> LineageReport:
    """Erase memories past their `expires_at` (LangGraph store TTLs): each is
    deleted with every one of its versions redacted, since an expired value is
    kept nowhere, and what was compacted from them goes too."""
    ids = sorted(set(ids))
    with transaction.atomic():
        scopes = _scopes(workspace=workspace, ids=ids)
        deleted = erase_items(workspace=workspace, ids=ids, actor=actor)
        report = lineage_erase_memories(workspace=workspace, actor=actor, memory_ids=deleted, scopes=scopes)
        report.memory_ids = [*deleted, *report.memory_ids]
        if deleted:
            indexes_purge()
    return report
