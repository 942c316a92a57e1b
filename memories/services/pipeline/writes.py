"""The writes of one extraction batch, through the item and edge services so
that every item change has its version. Called inside the batch transaction."""

from __future__ import annotations

from dataclasses import dataclass, field

from accounts.actors import Actor
from memories.extraction.types import ExtractionResult, Turn
from memories.llm.tokens import count_tokens
from memories.models import LifecycleStatus, MemoryItem, MemoryJob, MemoryType, Relation, Scope, Status, SummaryTier
from memories.services.edges import memory_edge_create
from memories.services.item_rules import normalize_fact_key
from memories.services.items import memory_item_create, memory_item_update
from memory_project.errors import EdgeConflictError

MICRO_IMPORTANCE = 0.5
MICRO_CONFIDENCE = 0.8


@dataclass
class BatchCounts:
    summaries: int = 0
    facts: int = 0
    facts_unchanged: int = 0
    facts_updated: int = 0
    open_loops: int = 0
    resolved: int = 0
    edges: int = 0
    item_ids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in
                ("summaries", "facts", "facts_unchanged", "facts_updated", "open_loops", "resolved", "edges")}


def live_items(*, workspace, scope: str, scope_id: str, type: str):  # noqa: A002
    """Items still in force in a scope: active status, not compacted or deprecated."""
    return MemoryItem.objects.filter(
        workspace=workspace, scope=scope, scope_id=scope_id, type=type, status=Status.ACTIVE,
        lifecycle_status__in=(LifecycleStatus.ACTIVE, LifecycleStatus.PENDING),
    )


def _edge(workspace, from_id: str, to_id: str, relation: str, counts: BatchCounts) -> None:
    try:
        memory_edge_create(workspace=workspace, from_id=from_id, to_id=to_id, relation=relation)
        counts.edges += 1
    except EdgeConflictError:
        pass  # already linked: a rerun of the same facts


def write_batch(
    *, job: MemoryJob, scope: str, scope_id: str, result: ExtractionResult, turns: list[Turn], review: bool
) -> BatchCounts:
    """Micro summary, facts (a new value of a key deprecates the old one, linked
    by `updates`), open loops, resolutions; each fact and loop `derived_from`
    the batch's summary. With `review`, new items start `pending`."""
    workspace = job.workspace
    actor = Actor.for_job(job.pk)
    lifecycle = LifecycleStatus.PENDING if review else LifecycleStatus.ACTIVE
    counts = BatchCounts()
    if not (result.summary.strip() or result.facts or result.open_loops or result.resolutions):
        return counts
    micro = memory_item_create(
        workspace=workspace, actor=actor, scope=scope, scope_id=scope_id, type=MemoryType.SUMMARY,
        summary_tier=SummaryTier.MICRO, content=result.summary.strip() or "-",
        importance=MICRO_IMPORTANCE, confidence=MICRO_CONFIDENCE,
        source_message_id=turns[-1].message_id, source_job=job,
        token_count_estimate=count_tokens(result.summary),
        coverage_start_floor_no=turns[0].floor_no, coverage_end_floor_no=turns[-1].floor_no,
        derived_from_count=len(turns), lifecycle_status=lifecycle,
    )
    counts.summaries += 1
    counts.item_ids.append(micro.pk)

    for fact in result.facts:
        key = normalize_fact_key(fact.key)
        current = list(live_items(workspace=workspace, scope=scope, scope_id=scope_id, type=MemoryType.FACT)
                       .filter(fact_key=key).order_by("created_at"))
        if any(item.content == fact.content for item in current):
            counts.facts_unchanged += 1  # same key, same value: nothing new
            continue
        new = memory_item_create(
            workspace=workspace, actor=actor, scope=scope, scope_id=scope_id, type=MemoryType.FACT,
            content=fact.content, fact_key=key, importance=fact.importance, confidence=fact.confidence,
            source_message_id=fact.message_id, source_floor_id=str(fact.floor_no), source_job=job,
            token_count_estimate=count_tokens(fact.content), lifecycle_status=lifecycle,
        )
        counts.facts += 1
        counts.item_ids.append(new.pk)
        _edge(workspace, new.pk, micro.pk, Relation.DERIVED_FROM, counts)
        for old in current:
            memory_item_update(workspace=workspace, actor=actor, memory_id=old.pk, changes={"status": Status.DEPRECATED})
            _edge(workspace, new.pk, old.pk, Relation.UPDATES, counts)
            counts.facts_updated += 1

    refs: dict[str, str] = {}
    for loop in result.open_loops:
        item = memory_item_create(
            workspace=workspace, actor=actor, scope=scope, scope_id=scope_id, type=MemoryType.OPEN_LOOP,
            content=loop.content, importance=loop.importance, confidence=0.8,
            source_message_id=loop.message_id, source_floor_id=str(loop.floor_no), source_job=job,
            token_count_estimate=count_tokens(loop.content), lifecycle_status=lifecycle,
        )
        refs[loop.ref] = item.pk
        counts.open_loops += 1
        counts.item_ids.append(item.pk)
        _edge(workspace, item.pk, micro.pk, Relation.DERIVED_FROM, counts)

    for resolution in result.resolutions:
        target = refs.get(resolution.target, resolution.target)
        loop_item = MemoryItem.objects.filter(
            workspace=workspace, pk=target, type=MemoryType.OPEN_LOOP, status=Status.ACTIVE
        ).first()
        if loop_item is None:
            continue  # closed meanwhile, or an id the model made up
        _edge(workspace, micro.pk, loop_item.pk, Relation.RESOLVES, counts)
        memory_item_update(workspace=workspace, actor=actor, memory_id=loop_item.pk, changes={"status": Status.DEPRECATED})
        counts.resolved += 1
    return counts


def scope_is_branch(scope: str) -> bool:
    return scope == Scope.BRANCH
