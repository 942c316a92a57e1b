"""What an approval does to the value it replaces.

In a workspace that requires review, an extracted fact starts `pending` and
replaces nothing: the approved value of its key stays active (and injected)
while the new one waits. Approving the pending fact is what retires the old
value: the live facts of the same key in the same scope are deprecated, each
with a version by the approver, and linked from the approved one by
`updates`. Rejecting it leaves the old value as it was.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Q
from django.utils import timezone

from accounts.actors import Actor
from memories.models import LifecycleStatus, MemoryEdge, MemoryItem, MemoryType, Relation, Status, VersionOperation
from memories.services.versioning import lock_memory_items, versions_record_bulk
from memory_project.db import insert_rows
from memory_project.ids import new_edge_id

_STATE_FIELDS = ["status", "lifecycle_status", "version", "current_version_id", "updated_at"]
_EDGE_COLUMNS = ("id", "workspace_id", "from_item_id", "to_item_id", "relation")


def is_approval(*, before: str, after: str) -> bool:
    """Whether a lifecycle change releases a memory from review."""
    return before == LifecycleStatus.PENDING and after in (LifecycleStatus.ACTIVE, LifecycleStatus.COMPACTED)


def facts_supersede_on_approval(*, workspace, approved: Sequence[MemoryItem], actor: Actor) -> list[str]:
    """Deprecate the active facts that the just-approved `approved` facts
    replace (same scope, scope id and `fact_key`), write their versions and
    the `updates` edges. Call inside the approval's transaction, after the
    approved items are locked; the replaced facts are locked here. Returns
    the ids deprecated."""
    facts = [item for item in approved
             if item.type == MemoryType.FACT and item.fact_key and item.status == Status.ACTIVE]
    if not facts:
        return []
    same_key = Q()
    for fact in facts:
        same_key |= Q(scope=fact.scope, scope_id=fact.scope_id, fact_key=fact.fact_key)
    approved_ids = {item.pk for item in approved}
    ids = (MemoryItem.objects.filter(same_key, workspace=workspace, type=MemoryType.FACT, status=Status.ACTIVE,
                                     lifecycle_status=LifecycleStatus.ACTIVE)
           .exclude(pk__in=approved_ids).values_list("pk", flat=True))
    replaced = list(lock_memory_items(workspace=workspace, ids=list(ids)).values())
    if not replaced:
        return []
    now = timezone.now()
    for item in replaced:
        item.status, item.lifecycle_status = Status.DEPRECATED, LifecycleStatus.DEPRECATED
        item.version += 1
        item.updated_at = now
    versions_record_bulk(items=replaced, operation=VersionOperation.MODIFIED, actor=actor)
    MemoryItem.objects.bulk_update(replaced, _STATE_FIELDS)
    by_key: dict[tuple[str, str, str], list[str]] = {}
    for fact in facts:
        by_key.setdefault((fact.scope, fact.scope_id, fact.fact_key), []).append(fact.pk)
    edges = [(new_edge_id(), workspace.pk, new, old.pk, Relation.UPDATES)
             for old in replaced for new in by_key.get((old.scope, old.scope_id, old.fact_key), [])]
    insert_rows(MemoryEdge, _EDGE_COLUMNS, edges, ignore_conflicts=True)
    return [item.pk for item in replaced]
