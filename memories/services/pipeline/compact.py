"""Compaction: a scope's micro summaries merged into one macro summary."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Min
from django.utils import timezone

from accounts.actors import Actor
from memories.llm import get_provider
from memories.llm.tokens import count_tokens
from memories.models import (
    LifecycleStatus,
    MemoryItem,
    MemoryJob,
    MemoryType,
    Relation,
    ScopeState,
    Status,
    SummaryTier,
)
from memories.services.edges import memory_edge_create
from memories.services.items import memory_item_create, memory_item_update
from memories.services.jobs import job_progress, memory_job_checkpoint
from memories.services.scopes import lock_scope_state, scope_refresh_totals
from memories.services.versioning import lock_memory_items

# One macro merges at most this many summaries: the merge prompt stays bounded
# however long the scope has gone without compaction; the rest wait for the
# next round (the job loops).
MAX_SOURCES_PER_MACRO = 40


def _active_summaries(job: MemoryJob, tier: str):
    return MemoryItem.objects.filter(
        workspace=job.workspace, scope=job.scope, scope_id=job.scope_id, type=MemoryType.SUMMARY,
        summary_tier=tier, status=Status.ACTIVE, lifecycle_status=LifecycleStatus.ACTIVE,
    )


def compact_run(job: MemoryJob) -> dict:
    """Merge the scope's active micro summaries (and its previous macro) into a
    new macro: `compacts` edges to each source, sources become `compacted`.
    Pending (unreviewed) micros are left alone. Without `force`, a scope with
    fewer than `MEMORY_COMPACT_MIN_MICROS` micros is left as it is."""
    minimum = 1 if job.payload.get("force") else max(1, settings.MEMORY_COMPACT_MIN_MICROS)
    provider = get_provider()
    actor = Actor.for_job(job.pk)
    macros = 0
    while True:
        memory_job_checkpoint(job=job)
        micros = list(
            _active_summaries(job, SummaryTier.MICRO)
            .order_by("coverage_start_floor_no", "created_at", "pk")
            .only("id", "content", "sources", "coverage_start_floor_no", "coverage_end_floor_no")[:MAX_SOURCES_PER_MACRO]
        )
        if len(micros) < minimum:
            break
        previous = _active_summaries(job, SummaryTier.MACRO).order_by("-created_at").only(
            "id", "content", "sources").first()
        sources = ([previous] if previous else []) + micros
        text, usage = provider.compact([s.content for s in sources])
        with transaction.atomic():
            lock_scope_state(workspace=job.workspace, scope=job.scope, scope_id=job.scope_id)
            locked = lock_memory_items(workspace=job.workspace, ids=[s.pk for s in sources])
            if any(
                s.pk not in locked or locked[s.pk].lifecycle_status != LifecycleStatus.ACTIVE
                or locked[s.pk].status != Status.ACTIVE
                for s in sources
            ):
                continue  # a source changed meanwhile (another run compacted it): read again
            span = MemoryItem.objects.filter(pk__in=[s.pk for s in sources]).aggregate(
                start=Min("coverage_start_floor_no"), end=Max("coverage_end_floor_no"))
            macro = memory_item_create(
                workspace=job.workspace, actor=actor, scope=job.scope, scope_id=job.scope_id,
                type=MemoryType.SUMMARY, summary_tier=SummaryTier.MACRO, content=text or "-",
                importance=0.6, confidence=0.8, source_job=job, token_count_estimate=count_tokens(text),
                coverage_start_floor_no=span["start"], coverage_end_floor_no=span["end"],
                derived_from_count=len(sources),
            )
            # A macro is made from the messages its summaries were made from.
            macro.sources = list(dict.fromkeys(m for s in sources for m in (s.sources or [])))
            macro.source_memory_ids = [s.pk for s in sources]
            MemoryItem.objects.filter(pk=macro.pk).update(sources=macro.sources,
                                                          source_memory_ids=macro.source_memory_ids)
            for source in sources:
                memory_edge_create(workspace=job.workspace, from_id=macro.pk, to_id=source.pk, relation=Relation.COMPACTS)
                memory_item_update(workspace=job.workspace, actor=actor, memory_id=source.pk,
                                   changes={"lifecycle_status": LifecycleStatus.COMPACTED})
            job_progress(job, counts={"macros": 1, "compacted": len(sources)}, input_tokens=usage.input_tokens,
                         output_tokens=usage.output_tokens, provider=provider.name)

            ScopeState.objects.filter(workspace=job.workspace, scope=job.scope, scope_id=job.scope_id).update(
                last_compacted_at=timezone.now())
        macros += 1
        minimum = max(minimum, 2)  # after the first round, only merge a real backlog
    state = lock_state_refresh(job)
    return {"macros_written": macros, "micro_count": state.micro_count}


def lock_state_refresh(job: MemoryJob):

    state = ScopeState.objects.filter(workspace=job.workspace, scope=job.scope, scope_id=job.scope_id).first()
    if state is None:
        with transaction.atomic():
            state = lock_scope_state(workspace=job.workspace, scope=job.scope, scope_id=job.scope_id)
    return scope_refresh_totals(state=state)
