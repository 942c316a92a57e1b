"""Re-derivation of a branch scope after an erasure: the `rebuild` job's work."""

from __future__ import annotations

from django.db import transaction

from accounts.actors import Actor
from conversations.services import conversation_update
from memories.llm import get_provider
from memories.models import LifecycleStatus, MemoryItem, MemoryJob, MemoryType, Scope, Status
from memories.services.lineage.erase import erase_items, indexes_purge
from memories.services.pipeline.extract import extract_run, job_branch, machine_written_ids
from memories.services.scopes import lock_scope_state

MAIN_BRANCH = "main"




def _earlier_summaries(*, workspace, scope_id: str, before_floor_no: int, excluding: set[str]) -> list[MemoryItem]:
    """The branch scope's summaries that stay and are in force: approved, not
    compacted (a live macro stands for its micros), wholly before the floor."""
    return [
        item for item in MemoryItem.objects.filter(
            workspace=workspace, scope=Scope.BRANCH, scope_id=scope_id, type=MemoryType.SUMMARY,
            status=Status.ACTIVE, lifecycle_status=LifecycleStatus.ACTIVE, coverage_end_floor_no__lt=before_floor_no,
        ).order_by("coverage_start_floor_no", "created_at", "pk").only(
            "id", "content", "sources", "source_message_id", "source_memory_ids", "coverage_end_floor_no")
        if item.pk not in excluding
    ]


def rederive_run(job: MemoryJob) -> dict:
    """Re-derive a branch scope from `payload["from_floor_no"]`: the floor is
    widened to the start of any machine-written summary that covers it; the
    machine-written micro and macro summaries (and open loops) from there on are
    erased, so extraction does not write them twice; the rolling summary
    becomes a merge of the summaries that stay before the floor; the
    checkpoint moves back; then extraction runs. The reset commits with a mark
    on the job, so a rerun after a crash continues with the extraction."""

    conversation, branch = job_branch(job)
    if branch is None:
        return {"skipped": "conversation or branch no longer exists"}
    erased: list[str] = []
    if not job.payload.get("reset_done"):
        workspace = job.workspace
        actor = Actor.for_job(job.pk)
        floor = max(1, int(job.payload.get("from_floor_no") or 1))
        machine = set(machine_written_ids(workspace=workspace, scope=job.scope, scope_id=job.scope_id))
        if conversation.user_id:
            # Open loops of a conversation with a user live in the user's scope.
            machine |= set(MemoryItem.objects.filter(
                pk__in=machine_written_ids(workspace=workspace, scope=Scope.USER, scope_id=conversation.user_id),
                type=MemoryType.OPEN_LOOP, source_job__scope_id=job.scope_id,
            ).values_list("pk", flat=True))
        covering = MemoryItem.objects.filter(
            pk__in=machine, type=MemoryType.SUMMARY, coverage_end_floor_no__gte=floor
        ).values_list("pk", "coverage_start_floor_no")
        doomed = {pk for pk, _ in covering}
        floor = min([floor, *(start for _, start in covering if start)])
        doomed |= {
            pk for pk, source_floor in MemoryItem.objects.filter(
                workspace=workspace, pk__in=machine, type=MemoryType.OPEN_LOOP,
            ).values_list("pk", "source_floor_id") if (source_floor or "").isdigit() and int(source_floor) >= floor
        }
        # What the deleted macros compacted and stays is in force again, so it
        # counts among the earlier summaries.
        revived = set()
        for sources in MemoryItem.objects.filter(pk__in=doomed).values_list("source_memory_ids", flat=True):
            revived.update(sources or ())
        earlier = _earlier_summaries(workspace=workspace, scope_id=job.scope_id, before_floor_no=floor,
                                     excluding=doomed)
        earlier += [
            item for item in MemoryItem.objects.filter(
                pk__in=revived - doomed, lifecycle_status=LifecycleStatus.COMPACTED,
                coverage_end_floor_no__lt=floor, status=Status.ACTIVE,
            ).only("id", "content", "sources", "source_message_id", "source_memory_ids", "coverage_end_floor_no")
        ]
        earlier.sort(key=lambda item: item.coverage_end_floor_no or 0)
        texts = [item.content for item in earlier if item.content.strip() and item.content != "-"]
        rolling = ""
        if len(texts) == 1:
            rolling = texts[0]
        elif texts:
            # The model call happens outside any transaction.
            rolling, _usage = get_provider().compact(texts)
        with transaction.atomic():
            state = lock_scope_state(workspace=workspace, scope=job.scope, scope_id=job.scope_id,
                                     conversation=conversation, branch=branch)
            erased = erase_items(workspace=workspace, ids=doomed, actor=actor)
            state.last_processed_floor_no = min(state.last_processed_floor_no, floor - 1)
            state.rolling_summary = rolling
            state.rolling_sources = list(dict.fromkeys(m for item in earlier for m in (item.sources or [])))
            state.summarized_until = earlier[-1].source_message_id or "" if earlier and rolling else ""
            state.save(update_fields=["last_processed_floor_no", "rolling_summary", "rolling_sources",
                                      "summarized_until", "updated_at"])
            if branch.name == MAIN_BRANCH:
                # Under review only approved summaries reach readers
                # (memories.selectors.summaries): nothing is published here.
                published = rolling if not workspace.requires_review else ""
                conversation_update(workspace=workspace, external_id=conversation.external_id, metadata={
                    "summary": published or None, "summarized_until": state.summarized_until or None})
            indexes_purge()
            job.payload = {**job.payload, "reset_done": True, "from_floor_no": floor}
            job.result = {"removed": len(erased)}
            MemoryJob.objects.filter(pk=job.pk).update(payload=job.payload, result=job.result)
    return {**extract_run(job, whole=True), "removed": len(erased) or job.result.get("removed", 0)}
