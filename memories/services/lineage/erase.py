"""Erasing what was derived (steps 2-5 of the package docstring): the memories
and their versions, rolling summaries, indexes, then queueing the
re-derivation of what remains."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import F, Q

from accounts.actors import Actor
from conversations.services import conversation_update
from memories.models import (
    JobKind,
    JobStatus,
    LifecycleStatus,
    MemoryItem,
    MemoryJob,
    MemoryType,
    Scope,
    ScopeState,
    SummaryTier,
)
from memories.recall.fulltext import recall_index_purge
from memories.recall.models import RecallEntry, RecallKind
from memories.search import search_index_purge
from memories.services.items import memory_item_delete, memory_redact_and_replace
from memories.services.items_batch import (
    MAX_BATCH_IDS,
    clean_batch_ids,
    memory_items_delete,
    memory_items_set_lifecycle,
)
from memories.services.jobs import memory_job_enqueue
from memories.services.lineage.find import conversation_items, derived_ids, memory_descendants
from memories.services.scopes import (
    COMPACTABLE_SCOPES,
    branch_scope_id,
    lock_scope_state,
    parse_branch_scope_id,
    scope_states_mark_erased,
)
from memories.services.versioning import deleted_memories_versions_redact, memory_version_redact, memory_versions_redact
from memory_project.erasure import erasure_on_disk
from memory_project.errors import DomainError, ValidationError
from memory_project.user_text import user_text_tables

MAIN_BRANCH = "main"


@dataclass
class LineageReport:
    """What an erasure removed, as the API answers it under `lineage`."""

    memory_ids: list[str] = field(default_factory=list)
    summaries_cleared: int = 0
    rederive_job_ids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "memories_deleted": len(self.memory_ids),
            "memory_ids": list(self.memory_ids),
            "summaries_cleared": self.summaries_cleared,
            "rederive_job_ids": list(dict.fromkeys(self.rederive_job_ids)),
        }




def erase_items(*, workspace, ids: Iterable[str], actor: Actor) -> list[str]:
    """Delete the memories (a `deleted` version each) and redact every one of
    their versions. The memories a deleted macro compacted and that stay are
    active again, so what remains is still served until it is compacted anew.
    Call inside a transaction."""
    ids = sorted(set(ids))
    if not ids:
        return []
    compacted = set()
    for sources in MemoryItem.objects.filter(workspace=workspace, pk__in=ids).values_list("source_memory_ids", flat=True):
        compacted.update(sources or ())
    revive = list(
        MemoryItem.objects.filter(
            workspace=workspace, pk__in=sorted(compacted - set(ids)), lifecycle_status=LifecycleStatus.COMPACTED
        ).values_list("pk", flat=True)
    )
    for start in range(0, len(revive), MAX_BATCH_IDS):
        memory_items_set_lifecycle(
            workspace=workspace, actor=actor, ids=revive[start : start + MAX_BATCH_IDS],
            lifecycle_status=LifecycleStatus.ACTIVE,
        )
    deleted: list[str] = []
    for start in range(0, len(ids), MAX_BATCH_IDS):
        result = memory_items_delete(workspace=workspace, actor=actor, ids=ids[start : start + MAX_BATCH_IDS])
        deleted += [row["id"] for row in result.results if row["result"] == "deleted"]
    deleted_memories_versions_redact(workspace=workspace, memory_ids=deleted, actor=actor)
    return deleted


def rolling_summaries_clear(*, workspace, states: Iterable[ScopeState], external_id: str, conversation_exists: bool) -> int:
    """Empty these scopes' rolling summaries; the main branch's copy in the
    conversation's metadata goes too. Returns how many summaries were cleared."""

    cleared = 0
    for state in states:
        ScopeState.objects.filter(pk=state.pk).update(rolling_summary="", rolling_sources=[], summarized_until="")
        cleared += 1
        if conversation_exists and _branch_name(state.scope_id) == MAIN_BRANCH:
            conversation_update(
                workspace=workspace, external_id=external_id, metadata={"summary": None, "summarized_until": None}
            )
    return cleared


def _branch_name(scope_id: str) -> str | None:
    try:
        return parse_branch_scope_id(scope_id)[1]
    except ValidationError:
        return None


def indexes_purge() -> None:
    # Deleted rows leave their terms in older FTS5 segments until a merge.
    search_index_purge()
    recall_index_purge()
    erasure_on_disk(user_text_tables())


def _rederive_floor(*, scope_id: str, erased: list[dict], event_floor: int | None, event_scope_id: str | None) -> int:
    floors = [event_floor] if event_floor is not None and scope_id == event_scope_id else []
    for row in erased:
        if row["scope"] == Scope.BRANCH and row["scope_id"] == scope_id and row["coverage_start_floor_no"]:
            floors.append(row["coverage_start_floor_no"])
        elif row["job_scope_id"] == scope_id and (row["source_floor_id"] or "").isdigit():
            floors.append(int(row["source_floor_id"]))
    return max(1, min(floors)) if floors else 1


def rederive_enqueue(*, workspace, scope_id: str, from_floor_no: int) -> str:
    """Queue (or widen) the re-derivation of a branch scope from a floor: a
    `rebuild` job whose payload names the floor. A pending one that starts
    later is moved down to this floor. Returns the job id."""
    with transaction.atomic():
        lock_scope_state(workspace=workspace, scope=Scope.BRANCH, scope_id=scope_id)
        job, created = memory_job_enqueue(
            workspace=workspace, kind=JobKind.REBUILD, scope=Scope.BRANCH, scope_id=scope_id,
            payload={"from_floor_no": from_floor_no},
        )
        current = job.payload.get("from_floor_no")
        if not created and current is not None and current > from_floor_no:
            # A full rebuild (no floor) covers it already.
            MemoryJob.objects.filter(pk=job.pk, status=JobStatus.PENDING).update(
                payload={**job.payload, "from_floor_no": from_floor_no}
            )
    return job.pk


def _compact_enqueue(*, workspace, scope: str, scope_id: str) -> str | None:
    if scope not in COMPACTABLE_SCOPES:
        return None
    with transaction.atomic():
        lock_scope_state(workspace=workspace, scope=scope, scope_id=scope_id)
        job, _ = memory_job_enqueue(
            workspace=workspace, kind=JobKind.COMPACT, scope=scope, scope_id=scope_id, payload={"force": True}
        )
    return job.pk




def lineage_erase_messages(
    *,
    workspace,
    actor: Actor,
    external_id: str,
    branch_names: Iterable[str],
    user_id: str | None,
    message_ids: Iterable[str],
    floor_no: int | None,
    branch_name: str | None,
    conversation_exists: bool = True,
    passages_changed: bool = False,
) -> LineageReport:
    """Erase what was derived from these messages of one conversation (edited
    or deleted), then queue its re-derivation from the lowest affected floor.
    `floor_no` / `branch_name`: where the message was."""
    message_ids = set(message_ids)
    branch_names = list(branch_names)
    report = LineageReport()
    event_scope_id = branch_scope_id(external_id, branch_name) if branch_name else None
    scope_ids = [branch_scope_id(external_id, name) for name in branch_names]
    with transaction.atomic():
        # First: a running extraction of these branches either committed
        # (and is found below) or will read the floors again.
        scope_states_mark_erased(workspace=workspace, scopes=[(Scope.BRANCH, s) for s in scope_ids])
        # The message's own text left its table in the change this follows.
        erasure_on_disk(user_text_tables())
        candidates = conversation_items(
            workspace=workspace, external_id=external_id, branch_names=branch_names, user_id=user_id
        ).values("pk", "sources", "source_memory_ids")
        doomed = derived_ids(candidates, message_ids=message_ids, memory_ids=set())
        erased = list(
            MemoryItem.objects.filter(workspace=workspace, pk__in=doomed).values(
                "pk", "scope", "scope_id", "coverage_start_floor_no", "source_floor_id",
                job_scope_id=F("source_job__scope_id"),
            )
        )
        report.memory_ids = erase_items(workspace=workspace, ids=doomed, actor=actor)
        states = [
            state
            for state in ScopeState.objects.filter(workspace=workspace, scope=Scope.BRANCH, scope_id__in=scope_ids)
            if message_ids.intersection(state.rolling_sources or ())
            or (state.rolling_summary and not state.rolling_sources and floor_no is not None
                and floor_no <= state.last_processed_floor_no)
        ]
        report.summaries_cleared = rolling_summaries_clear(
            workspace=workspace, states=states, external_id=external_id, conversation_exists=conversation_exists
        )
        if report.memory_ids or states or passages_changed:
            # Merging the index costs a pass over it: only when text left it.
            indexes_purge()
        touched = {row["scope_id"] for row in erased if row["scope"] == Scope.BRANCH}
        touched |= {row["job_scope_id"] for row in erased if row["job_scope_id"] in scope_ids}
        touched |= {state.scope_id for state in states}
        for scope_id in sorted(touched & set(scope_ids)):
            floor = _rederive_floor(scope_id=scope_id, erased=erased, event_floor=floor_no,
                                    event_scope_id=event_scope_id)
            report.rederive_job_ids.append(rederive_enqueue(workspace=workspace, scope_id=scope_id,
                                                            from_floor_no=floor))
    return report


def lineage_erase_conversation(
    *, workspace, actor: Actor, conversation_pk: int | None, external_id: str, branch_names: Iterable[str],
    user_id: str | None = None, conversation_exists: bool,
) -> LineageReport:
    """Erase everything made from a conversation whose messages are all gone
    (cleared, deleted or expired): every memory of its branch and chat scopes
    and every memory its extractions wrote elsewhere (the user's facts), with
    their versions; its rolling summaries and passages. Nothing remains to
    re-derive from."""
    branch_names = list(branch_names)
    scope_ids = [branch_scope_id(external_id, name) for name in branch_names]
    report = LineageReport()
    with transaction.atomic():
        scope_states_mark_erased(workspace=workspace, scopes=[(Scope.BRANCH, s) for s in scope_ids])
        ids = list(
            conversation_items(workspace=workspace, external_id=external_id, branch_names=branch_names, user_id=None)
            .values_list("pk", flat=True)
        )
        # Summaries elsewhere that compacted one of them go too.
        ids += memory_descendants(workspace=workspace, memory_ids=ids)
        report.memory_ids = erase_items(workspace=workspace, ids=ids, actor=actor)
        states = list(
            ScopeState.objects.filter(workspace=workspace, scope=Scope.BRANCH, scope_id__in=scope_ids)
            .exclude(rolling_summary="", rolling_sources=[])
        )
        report.summaries_cleared = rolling_summaries_clear(
            workspace=workspace, states=states, external_id=external_id, conversation_exists=conversation_exists
        )
        if not conversation_exists:
            # A new conversation with the same id starts from nothing.
            ScopeState.objects.filter(workspace=workspace, scope=Scope.BRANCH, scope_id__in=scope_ids).delete()
        elif conversation_pk is not None:
            RecallEntry.objects.filter(
                workspace=workspace, kind=RecallKind.PASSAGE, conversation_id=conversation_pk
            ).delete()
        MemoryJob.objects.filter(
            workspace=workspace, scope=Scope.BRANCH, scope_id__in=scope_ids, status=JobStatus.PENDING,
            kind=JobKind.REBUILD,
        ).update(status=JobStatus.CANCELLED)
        indexes_purge()
    return report




def lineage_erase_memories(*, workspace, actor: Actor, memory_ids: Iterable[str],
                           scopes: Iterable[tuple[str, str]]) -> LineageReport:
    """Erase the summaries compacted from these memories (deleted, or one of
    their versions redacted) and compact what remains of their scopes again.
    `scopes`: the (scope, scope_id) the memories lived in."""
    memory_ids = list(memory_ids)
    report = LineageReport()
    with transaction.atomic():
        erasure_on_disk(user_text_tables())
        query = Q()
        scopes = {scope for scope in scopes if scope and scope[0]}
        scope_states_mark_erased(workspace=workspace, scopes=scopes)
        for scope, scope_id in scopes:
            query |= Q(scope=scope, scope_id=scope_id)
        if not scopes:
            return report
        rows = (MemoryItem.objects.filter(query, workspace=workspace, type=MemoryType.SUMMARY,
                                          summary_tier=SummaryTier.MACRO)
                .values("pk", "sources", "source_memory_ids"))
        doomed = derived_ids(rows, message_ids=set(), memory_ids=set(memory_ids))
        report.memory_ids = erase_items(workspace=workspace, ids=doomed, actor=actor)
        if report.memory_ids:
            indexes_purge()
            for scope, scope_id in sorted(scopes):
                job_id = _compact_enqueue(workspace=workspace, scope=scope, scope_id=scope_id)
                if job_id:
                    report.rederive_job_ids.append(job_id)
    return report


def memory_delete_following_lineage(*, workspace, actor: Actor, memory_id: str, **preconditions) -> LineageReport:
    """Delete a memory (`memory_item_delete`) and erase what was compacted from it."""

    with transaction.atomic():
        scope = MemoryItem.objects.filter(workspace=workspace, pk=memory_id).values_list("scope", "scope_id").first()
        memory_item_delete(workspace=workspace, actor=actor, memory_id=memory_id, **preconditions)
        return lineage_erase_memories(workspace=workspace, actor=actor, memory_ids=[memory_id], scopes=[scope])


def memories_delete_following_lineage(*, workspace, actor: Actor, ids):
    """Batch delete (`memory_items_delete`, up to its maximum of ids) and erase
    what was compacted from the deleted memories. Returns (batch result, report)."""
    ids = clean_batch_ids(ids)
    with transaction.atomic():
        scopes = set(MemoryItem.objects.filter(workspace=workspace, pk__in=ids).values_list("scope", "scope_id"))
        result = memory_items_delete(workspace=workspace, actor=actor, ids=ids)
        deleted = [row["id"] for row in result.results if row["result"] == "deleted"]
        report = lineage_erase_memories(workspace=workspace, actor=actor, memory_ids=deleted, scopes=scopes)
    return result, report


def memory_version_redact_following_lineage(*, workspace, actor: Actor, version_id: str,
                                            store_id: str | None = None):
    """Redact a version (`memory_version_redact`) and erase the summaries
    compacted from its memory, which may quote the redacted text. Returns
    (version, report)."""

    with transaction.atomic():
        version = memory_version_redact(workspace=workspace, version_id=version_id, actor=actor, store_id=store_id)
        scope = (version.attributes.get("scope"), version.attributes.get("scope_id"))
        live = MemoryItem.objects.filter(workspace=workspace, pk=version.memory_id).values_list(
            "scope", "scope_id").first()
        scopes = {live or scope} if (live or scope[0]) else set()
        report = lineage_erase_memories(workspace=workspace, actor=actor, memory_ids=[version.memory_id],
                                        scopes=scopes)
    return version, report


def memory_redact_and_replace_following_lineage(*, workspace, actor: Actor, memory_id: str, content: str,
                                                expected_version: int):
    """Replace a memory's content and redact its earlier versions
    (`memory_redact_and_replace`), then erase the summaries compacted from it,
    which may quote the old text. Returns (item, redacted versions, report)."""

    with transaction.atomic():
        item, done = memory_redact_and_replace(workspace=workspace, actor=actor, memory_id=memory_id, content=content,
                                               expected_version=expected_version)
        report = lineage_erase_memories(workspace=workspace, actor=actor, memory_ids=[item.pk],
                                        scopes=[(item.scope, item.scope_id)])
    return item, done, report


def memory_versions_redact_following_lineage(
    *, workspace, actor: Actor, items: list[MemoryItem]
) -> tuple[list[MemoryItem], list[tuple[MemoryItem, DomainError]], LineageReport]:
    """Redact every earlier version of each of `items` (`memory_versions_redact`;
    the current version is kept), each on its own so one refusal does not stop
    the others, then erase the summaries compacted from the redacted ones in
    one pass: one index purge and one re-derivation per scope. Returns
    (redacted items, (item, error) refused, report)."""

    redacted: list[MemoryItem] = []
    refused: list[tuple[MemoryItem, DomainError]] = []
    with transaction.atomic():
        for item in items:
            try:
                with transaction.atomic():
                    memory_versions_redact(workspace=workspace, memory_id=item.pk, actor=actor)
            except DomainError as error:
                refused.append((item, error))
            else:
                redacted.append(item)
        report = lineage_erase_memories(workspace=workspace, actor=actor, memory_ids=[item.pk for item in redacted],
                                        scopes={(item.scope, item.scope_id) for item in redacted})
    return redacted, refused, report
