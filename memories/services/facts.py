"""An agent's own facts: write one into a scope, a newer value of the same
`fact_key` replacing the older (deprecated, linked by `updates`), as the
extraction pipeline does for the facts it finds."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction

from accounts.actors import Actor
from memories.models import LifecycleStatus, MemoryItem, MemoryType, Relation, Status
from memories.services.edges import memory_edge_create
from memories.services.item_rules import normalize_fact_key
from memories.services.items import memory_item_create, memory_item_update
from memories.services.versioning import lock_memory_items


@dataclass
class RememberResult:
    item: MemoryItem
    # "created", or "unchanged" when the key already holds this very value.
    operation: str
    deprecated_ids: list[str] = field(default_factory=list)


def memory_fact_remember(
    *,
    workspace,
    actor: Actor,
    scope: str,
    scope_id: str,
    content: str,
    fact_key: str | None = None,
    importance: float = 0.7,
    confidence: float = 1.0,
    metadata: dict | None = None,
) -> RememberResult:
    """Write a fact into (scope, scope_id). With a `fact_key`, the facts of that
    key still in force in the scope are deprecated and linked from the new one
    by `updates`; if one of them already says exactly `content`, nothing is
    written. One transaction; the old facts are locked before they change.
    Raises ValidationError for bad fields (see `memory_item_create`)."""
    key = normalize_fact_key(fact_key)
    with transaction.atomic():
        current: list[MemoryItem] = []
        if key is not None:
            ids = MemoryItem.objects.filter(
                workspace=workspace, scope=scope, scope_id=scope_id, type=MemoryType.FACT, fact_key=key,
                status=Status.ACTIVE, lifecycle_status__in=(LifecycleStatus.ACTIVE, LifecycleStatus.PENDING),
            ).values_list("pk", flat=True)
            current = list(lock_memory_items(workspace=workspace, ids=ids).values())
            same = next((item for item in current if item.content == content), None)
            if same is not None:
                return RememberResult(item=same, operation="unchanged")
        item = memory_item_create(
            workspace=workspace, actor=actor, scope=scope, scope_id=scope_id, type=MemoryType.FACT,
            content=content, fact_key=key, importance=importance, confidence=confidence, metadata=metadata,
        )
        for old in current:
            memory_item_update(workspace=workspace, actor=actor, memory_id=old.pk, changes={"status": Status.DEPRECATED})
            memory_edge_create(workspace=workspace, from_id=item.pk, to_id=old.pk, relation=Relation.UPDATES)
    return RememberResult(item=item, operation="created", deprecated_ids=[old.pk for old in current])
