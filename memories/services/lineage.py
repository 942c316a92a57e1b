"""Erasure that follows lineage: when text goes away, so does everything made from it.

A derived memory records where it came from: `sources` (the message ids it was
made from), `source_memory_ids` (for a macro summary, the memories it
compacts) and `source_job` (the extraction that wrote it, whose scope id is a
branch scope). A branch scope's rolling summary records `rolling_sources`.
When a message is edited or deleted, a conversation cleared, deleted or
expired, a memory deleted or one of its versions redacted, this module

1. finds every memory derived from the affected text, through those links
   (a fixpoint: a macro of a macro of a deleted micro goes too);
2. deletes them and redacts all of their versions (a deletion that left the
   text in an old version would not be an erasure), scrubbing copies in the
   admin log and job payloads (`memories.services.redaction`);
3. clears the rolling summaries that drew on the text (scope state and the
   conversation's metadata);
4. drops or rebuilds the recall passages (and so their vectors) of the
   affected messages, and purges the full-text indexes;
5. queues a re-derivation of what remains: for a branch scope, a rebuild job
   from the lowest affected floor (`rederive_run`); for memories compacted
   into a deleted macro, the sources are active again and a compaction runs.

Steps 1-4 are bounded by the conversation's own scopes (its branches, its
chat scope, its user's scope) and run in one transaction, so an API answer
can say what was removed (`LineageReport`); the language-model work of step 5
runs in the job. Every change writes versions with the actor who caused it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import F, Q

from accounts.actors import Actor
from memories.models import (
    JobKind,
    JobStatus,
    LifecycleStatus,
    MemoryItem,
    MemoryJob,
    MemoryType,
    RecallEntry,
    RecallKind,
    Scope,
    ScopeState,
    Status,
    SummaryTier,
)
from memories.recall.index import passage_entries_delete, passage_entries_rebuild, recall_index_purge
from memories.search import search_index_purge
from memories.services.items_batch import (
    MAX_BATCH_IDS,
    clean_batch_ids,
    memory_items_delete,
    memory_items_set_lifecycle,
)
from memories.services.jobs import memory_job_enqueue
from memories.services.redaction import REDACTED_PLACEHOLDER
from memories.services.scopes import COMPACTABLE_SCOPES, branch_scope_id, lock_scope_state, parse_branch_scope_id
from memories.services.text_sweep import text_sweep_count, text_sweep_erase
from memories.services.versioning import deleted_memories_versions_redact
from memory_project.erasure import erasure_on_disk
from memory_project.errors import DomainError, ValidationError
from memory_project.user_text import user_text_tables

logger = logging.getLogger(__name__)

MAIN_BRANCH = "main"
# A text to redact across a workspace must be specific enough that matching it
# by substring does not hit unrelated memories.
MIN_REDACT_TEXT_CHARS = 4


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


# --- finding --------------------------------------------------------------------------


def _derived(rows: Iterable[dict], *, message_ids: set[str], memory_ids: set[str]) -> set[str]:
    """The ids among `rows` (pk, sources, source_memory_ids) made from one of
    the messages or memories, directly or through another derived row."""
    rows = list(rows)
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        gone = memory_ids | found
        for row in rows:
            if row["pk"] in found or row["pk"] in memory_ids:
                continue
            if message_ids.intersection(row["sources"] or ()) or gone.intersection(row["source_memory_ids"] or ()):
                found.add(row["pk"])
                changed = True
    return found


def _conversation_items(*, workspace, external_id: str, branch_names: Iterable[str], user_id: str | None):
    """The memories a conversation's messages can have reached: its branch
    scopes, its chat scope, its user's scope and whatever its extractions wrote."""
    scope_ids = [branch_scope_id(external_id, name) for name in branch_names]
    query = Q(scope=Scope.BRANCH, scope_id__in=scope_ids) | Q(scope=Scope.CHAT, scope_id=external_id)
    query |= Q(source_job__scope=Scope.BRANCH, source_job__scope_id__in=scope_ids)
    if user_id:
        query |= Q(scope=Scope.USER, scope_id=user_id)
    return MemoryItem.objects.filter(query, workspace=workspace)


def memory_descendants(*, workspace, memory_ids: Iterable[str]) -> list[str]:
    """The memories compacted, directly or not, from these ones (macro
    summaries of their scopes). For the admin's "also appears in" and for
    erasure after a memory's deletion or redaction."""
    memory_ids = set(memory_ids)
    if not memory_ids:
        return []
    scopes = set(
        MemoryItem.objects.filter(workspace=workspace, pk__in=memory_ids).values_list("scope", "scope_id")
    )
    query = Q()
    for scope, scope_id in scopes:
        query |= Q(scope=scope, scope_id=scope_id)
    candidates = MemoryItem.objects.filter(workspace=workspace, type=MemoryType.SUMMARY).exclude(source_memory_ids=[])
    if scopes:
        candidates = candidates.filter(query)
    rows = candidates.values("pk", "sources", "source_memory_ids")
    return sorted(_derived(rows, message_ids=set(), memory_ids=memory_ids))


def message_descendants(*, workspace, external_id: str, message_ids: Iterable[str]) -> list[str]:
    """The memories made from these messages of one conversation (what an edit
    or deletion of them would erase): for the admin's "also appears in"."""
    from conversations.selectors import conversation_get

    conversation = conversation_get(workspace=workspace, external_id=external_id)
    if conversation is None:
        return []
    rows = _conversation_items(
        workspace=workspace, external_id=external_id, user_id=conversation.user_id,
        branch_names=conversation.branches.values_list("name", flat=True),
    ).values("pk", "sources", "source_memory_ids")
    return sorted(_derived(rows, message_ids=set(message_ids), memory_ids=set()))


# --- erasing --------------------------------------------------------------------------


def _erase_items(*, workspace, ids: Iterable[str], actor: Actor) -> list[str]:
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


def _clear_rolling(*, workspace, states: Iterable[ScopeState], external_id: str, conversation_exists: bool) -> int:
    """Empty these scopes' rolling summaries; the main branch's copy in the
    conversation's metadata goes too. Returns how many summaries were cleared."""
    from conversations.services import conversation_update

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


def _purge_indexes() -> None:
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


# --- re-derivation (the job) -------------------------------------------------------------


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
    from conversations.services import conversation_update
    from memories.llm import get_provider
    from memories.services.pipeline.extract import _branch, extract_run, machine_written_ids

    conversation, branch = _branch(job)
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
            erased = _erase_items(workspace=workspace, ids=doomed, actor=actor)
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
            _purge_indexes()
            job.payload = {**job.payload, "reset_done": True, "from_floor_no": floor}
            job.result = {"removed": len(erased)}
            MemoryJob.objects.filter(pk=job.pk).update(payload=job.payload, result=job.result)
    return {**extract_run(job, whole=True), "removed": len(erased) or job.result.get("removed", 0)}


# --- messages and conversations --------------------------------------------------------


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
        # The message's own text left its table in the change this follows.
        erasure_on_disk(user_text_tables())
        candidates = _conversation_items(
            workspace=workspace, external_id=external_id, branch_names=branch_names, user_id=user_id
        ).values("pk", "sources", "source_memory_ids")
        doomed = _derived(candidates, message_ids=message_ids, memory_ids=set())
        erased = list(
            MemoryItem.objects.filter(workspace=workspace, pk__in=doomed).values(
                "pk", "scope", "scope_id", "coverage_start_floor_no", "source_floor_id",
                job_scope_id=F("source_job__scope_id"),
            )
        )
        report.memory_ids = _erase_items(workspace=workspace, ids=doomed, actor=actor)
        states = [
            state
            for state in ScopeState.objects.filter(workspace=workspace, scope=Scope.BRANCH, scope_id__in=scope_ids)
            if message_ids.intersection(state.rolling_sources or ())
            or (state.rolling_summary and not state.rolling_sources and floor_no is not None
                and floor_no <= state.last_processed_floor_no)
        ]
        report.summaries_cleared = _clear_rolling(
            workspace=workspace, states=states, external_id=external_id, conversation_exists=conversation_exists
        )
        if report.memory_ids or states or passages_changed:
            # Merging the index costs a pass over it: only when text left it.
            _purge_indexes()
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
        ids = list(
            _conversation_items(workspace=workspace, external_id=external_id, branch_names=branch_names, user_id=None)
            .values_list("pk", flat=True)
        )
        # Summaries elsewhere that compacted one of them go too.
        ids += memory_descendants(workspace=workspace, memory_ids=ids)
        report.memory_ids = _erase_items(workspace=workspace, ids=ids, actor=actor)
        states = list(
            ScopeState.objects.filter(workspace=workspace, scope=Scope.BRANCH, scope_id__in=scope_ids)
            .exclude(rolling_summary="", rolling_sources=[])
        )
        report.summaries_cleared = _clear_rolling(
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
        _purge_indexes()
    return report


def _message_rows(*, workspace, external_id: str, message_id: str):
    from conversations.selectors import conversation_get

    conversation = conversation_get(workspace=workspace, external_id=external_id)
    if conversation is None:
        return None, []
    return conversation, list(conversation.messages.filter(pk=message_id))


# --- receivers of conversations.hooks -----------------------------------------------------


def _workspace(workspace_id):
    from accounts.models import Workspace

    return Workspace.objects.filter(pk=workspace_id).first()


def _actor() -> Actor:
    from conversations.hooks import current_actor

    return current_actor() or Actor.system()


def _answer(report: LineageReport) -> dict[str, Any]:
    return {"lineage": report.as_dict()}


def lineage_note_message_edited(*, event) -> dict[str, Any] | None:
    """Receiver of `message_edited`: a content change erases what was made of
    the old text and re-derives from the new one; its passages are rebuilt."""
    if not event.content_changed:
        return None
    workspace = _workspace(event.workspace_id)
    if workspace is None:
        return None
    conversation, messages = _message_rows(workspace=workspace, external_id=event.external_id,
                                           message_id=event.message_id)
    if conversation is None:
        return None
    with transaction.atomic():
        indexed = RecallEntry.objects.filter(workspace=workspace, kind=RecallKind.PASSAGE,
                                             message_id=event.message_id).exists()
        if indexed:
            passage_entries_rebuild(workspace_id=workspace.pk, messages=messages)
            _embed_on_commit(workspace.pk)
        report = lineage_erase_messages(passages_changed=indexed,
            workspace=workspace, actor=_actor(), external_id=event.external_id,
            branch_names=conversation.branches.values_list("name", flat=True), user_id=conversation.user_id,
            message_ids=[event.message_id], floor_no=event.floor_no, branch_name=event.branch.name,
        )
    return _answer(report)


def lineage_note_message_deleted(*, event) -> dict[str, Any] | None:
    """Receiver of `message_deleted`."""
    from conversations.selectors import conversation_get

    workspace = _workspace(event.workspace_id)
    if workspace is None:
        return None
    conversation = conversation_get(workspace=workspace, external_id=event.external_id)
    if conversation is None:
        return None
    with transaction.atomic():
        dropped = passage_entries_delete(workspace_id=workspace.pk, message_ids=[event.message_id])
        report = lineage_erase_messages(passages_changed=bool(dropped),
            workspace=workspace, actor=_actor(), external_id=event.external_id,
            branch_names=conversation.branches.values_list("name", flat=True), user_id=conversation.user_id,
            message_ids=[event.message_id], floor_no=event.floor_no, branch_name=event.branch.name,
        )
    return _answer(report)


def lineage_note_messages_cleared(*, event) -> dict[str, Any] | None:
    """Receiver of `messages_cleared`."""
    workspace = _workspace(event.workspace_id)
    if workspace is None:
        return None
    report = lineage_erase_conversation(
        workspace=workspace, actor=_actor(), conversation_pk=event.conversation_id, external_id=event.external_id,
        branch_names=[branch.name for branch in event.branches], conversation_exists=True,
    )
    return _answer(report)


def lineage_note_conversation_deleted(*, event) -> dict[str, Any] | None:
    """Receiver of `conversation_deleted` (an API delete or expiry)."""
    workspace = _workspace(event.workspace_id)
    if workspace is None:
        return None
    report = lineage_erase_conversation(
        workspace=workspace, actor=_actor(), conversation_pk=None, external_id=event.external_id,
        branch_names=[branch.name for branch in event.branches], conversation_exists=False,
    )
    return _answer(report)


_RECEIVERS = {
    "message_edited": ("MessageEdited", lineage_note_message_edited),
    "message_deleted": ("MessageDeleted", lineage_note_message_deleted),
    "messages_cleared": ("MessagesCleared", lineage_note_messages_cleared),
    "conversation_deleted": ("ConversationDeleted", lineage_note_conversation_deleted),
}


def lineage_receiver(signal_name: str):
    """The receiver connected to `conversations.hooks.<signal_name>`. It erases
    at once, so the request's answer can say what went; if that fails (the
    change it follows is committed already), the erasure is handed to a
    Celery task that retries it, rather than lost."""
    service = _RECEIVERS[signal_name][1]

    def receive(sender, event, **kwargs):
        try:
            return service(event=event)
        except Exception:
            logger.exception("lineage erasure after %s failed; queued to run again", signal_name)
            from memories.tasks import erase_lineage_task

            erase_lineage_task.delay(signal_name, dataclasses.asdict(event))
            return None

    receive.__name__ = service.__name__
    return receive


def lineage_event_replay(*, signal_name: str, event: dict) -> dict[str, Any] | None:
    """Run a receiver's erasure again from its event as a plain dict."""
    from conversations import hooks

    type_name, service = _RECEIVERS[signal_name]
    fields = dict(event)
    if "branch" in fields:
        fields["branch"] = hooks.BranchRef(**fields["branch"])
    if "branches" in fields:
        fields["branches"] = tuple(hooks.BranchRef(**branch) for branch in fields["branches"])
    return service(event=getattr(hooks, type_name)(**fields))


def _embed_on_commit(workspace_id) -> None:
    from memories.tasks import embed_recall_entries_task

    transaction.on_commit(lambda: embed_recall_entries_task.delay(workspace_id))


# --- memories ---------------------------------------------------------------------------


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
        scopes = set(scopes)
        for scope, scope_id in scopes:
            query |= Q(scope=scope, scope_id=scope_id)
        if not scopes:
            return report
        rows = (MemoryItem.objects.filter(query, workspace=workspace, type=MemoryType.SUMMARY,
                                          summary_tier=SummaryTier.MACRO)
                .values("pk", "sources", "source_memory_ids"))
        doomed = _derived(rows, message_ids=set(), memory_ids=set(memory_ids))
        report.memory_ids = _erase_items(workspace=workspace, ids=doomed, actor=actor)
        if report.memory_ids:
            _purge_indexes()
            for scope, scope_id in sorted(scopes):
                job_id = _compact_enqueue(workspace=workspace, scope=scope, scope_id=scope_id)
                if job_id:
                    report.rederive_job_ids.append(job_id)
    return report


def memory_delete_following_lineage(*, workspace, actor: Actor, memory_id: str, **preconditions) -> LineageReport:
    """Delete a memory (`memory_item_delete`) and erase what was compacted from it."""
    from memories.services.items import memory_item_delete

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
    from memories.services.versioning import memory_version_redact

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
    from memories.services.items import memory_redact_and_replace

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
    from memories.services.versioning import memory_versions_redact

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


# --- a text across a workspace ----------------------------------------------------------


@dataclass
class TextOccurrences:
    memory_ids: list[str]
    version_ids: list[str]
    derived_ids: list[str]
    rolling_states: list[int]
    # With `messages=True`: the messages quoting it, and the memories made
    # from them not counted above (they may hold the text reworded, where a
    # search would miss it).
    message_ids: list[str] = field(default_factory=list)
    message_derived_ids: list[str] = field(default_factory=list)
    # Every registered column holding it (`table.column` -> rows), from the
    # user-text registry: metadata, keys, paths, session entries, blobs.
    columns: dict[str, int] = field(default_factory=dict)


def workspace_text_occurrences(*, workspace, text: str, messages: bool = False) -> TextOccurrences:
    """Where `text` is in a workspace's memories: live memories whose content
    holds it, versions (of any memory) that hold it, summaries compacted from
    those memories, rolling summaries that quote it; with `messages`, also
    the messages quoting it and what was made from them (what a redaction
    everywhere would clear, for its preview)."""
    from conversations.selectors import messages_quoting
    from memories.models import MemoryVersion

    text = clean_redact_text(text)
    memory_ids = list(
        MemoryItem.objects.filter(workspace=workspace, content__contains=text).order_by("pk").values_list("pk", flat=True)
    )
    version_ids = list(
        MemoryVersion.objects.filter(workspace=workspace, redacted_at__isnull=True)
        .filter(Q(content__contains=text) | Q(path__contains=text))
        .order_by("pk").values_list("pk", flat=True)
    )
    derived = [pk for pk in memory_descendants(workspace=workspace, memory_ids=memory_ids) if pk not in memory_ids]
    states = list(
        ScopeState.objects.filter(workspace=workspace, rolling_summary__contains=text).values_list("pk", flat=True)
    )
    found = TextOccurrences(memory_ids, version_ids, derived, states)
    if messages:
        by_conversation: dict[str, list[str]] = {}
        for external_id, message_id, _content in messages_quoting(workspace=workspace, text=text):
            by_conversation.setdefault(external_id, []).append(message_id)
            found.message_ids.append(message_id)
        made = set()
        for external_id, message_ids in by_conversation.items():
            made.update(message_descendants(workspace=workspace, external_id=external_id, message_ids=message_ids))
        found.message_derived_ids = sorted(made - set(memory_ids) - set(derived))
        found.columns = text_sweep_count(workspace=workspace, text=text)
    return found


def clean_redact_text(text: Any) -> str:
    if not isinstance(text, str) or len(text.strip()) < MIN_REDACT_TEXT_CHARS:
        raise ValidationError(f"text: at least {MIN_REDACT_TEXT_CHARS} characters.")
    return text.strip()


def workspace_text_redact(*, workspace, actor: Actor, text: str) -> dict[str, Any]:
    """Redact `text` everywhere in a workspace: each message quoting it is
    edited (the text replaced by a mark), which erases and re-derives what
    was made from it (the receivers above); each live memory
    holding it gets the text replaced by a mark (a new version) and all its
    earlier versions redacted; other versions holding it are redacted;
    summaries compacted from those memories are erased and re-derived;
    rolling summaries quoting it are cleared. Returns counts."""
    from memories.models import MemoryVersion
    from memories.services.items import memory_redact_and_replace
    from memories.services.versioning import memory_versions_redact

    text = clean_redact_text(text)
    report = LineageReport()
    # Messages first, each in its own commit: their receivers run after it.
    messages = _messages_redact(workspace=workspace, actor=actor, text=text, report=report)
    with transaction.atomic():
        found = workspace_text_occurrences(workspace=workspace, text=text)
        scopes = set(MemoryItem.objects.filter(pk__in=found.memory_ids).values_list("scope", "scope_id"))
        erased = lineage_erase_memories(workspace=workspace, actor=actor, memory_ids=found.memory_ids, scopes=scopes)
        report.memory_ids += erased.memory_ids
        report.rederive_job_ids += erased.rederive_job_ids
        replaced = 0
        for item in MemoryItem.objects.filter(workspace=workspace, pk__in=found.memory_ids).only("pk", "content"):
            memory_redact_and_replace(workspace=workspace, actor=actor, memory_id=item.pk,
                                      content=item.content.replace(text, REDACTED_PLACEHOLDER))
            replaced += 1
        remaining = (MemoryVersion.objects.filter(pk__in=found.version_ids, redacted_at__isnull=True)
                     .values_list("memory_id", "pk"))
        by_memory: dict[str, list[str]] = {}
        for memory_id, version_id in remaining:
            by_memory.setdefault(memory_id, []).append(version_id)
        versions = 0
        for memory_id, version_ids in sorted(by_memory.items()):
            head = MemoryItem.objects.filter(pk=memory_id).values_list("current_version_id", flat=True).first()
            version_ids = [pk for pk in version_ids if pk != head]
            if version_ids:
                versions += len(memory_versions_redact(workspace=workspace, memory_id=memory_id, actor=actor,
                                                       version_ids=version_ids))
        states = list(ScopeState.objects.filter(pk__in=found.rolling_states, rolling_summary__contains=text))
        cleared = report.summaries_cleared
        for state in states:
            external_id = None
            if state.scope == Scope.BRANCH:
                try:
                    external_id = parse_branch_scope_id(state.scope_id)[0]
                except ValidationError:
                    external_id = None
            cleared += _clear_rolling(workspace=workspace, states=[state], external_id=external_id or "",
                                      conversation_exists=external_id is not None and state.conversation_id is not None)
        # What lineage does not reach: metadata, keys, paths, session entries, blobs.
        swept = text_sweep_erase(workspace=workspace, text=text)
        _purge_indexes()
    return {
        "memories_replaced": replaced,
        "versions_redacted": versions,
        "messages_redacted": messages,
        "columns_scrubbed": swept,
        "lineage": {**report.as_dict(), "summaries_cleared": cleared},
    }


def _replace_in_json(value: Any, text: str) -> Any:
    if isinstance(value, str):
        return value.replace(text, REDACTED_PLACEHOLDER)
    if isinstance(value, list):
        return [_replace_in_json(element, text) for element in value]
    if isinstance(value, dict):
        return {_replace_in_json(key, text): _replace_in_json(element, text) for key, element in value.items()}
    return value


def _messages_redact(*, workspace, actor: Actor, text: str, report: LineageReport) -> int:
    from conversations import hooks
    from conversations.selectors import messages_quoting
    from conversations.services import message_update

    rows = messages_quoting(workspace=workspace, text=text)
    for external_id, message_id, content in rows:
        with hooks.collect_answers(actor=actor) as answers:
            message_update(workspace=workspace, external_id=external_id, message_id=message_id,
                           content=_replace_in_json(content, text))
        found = answers.get("lineage") or {}
        report.memory_ids += [pk for pk in found.get("memory_ids") or () if pk not in report.memory_ids]
        report.summaries_cleared += found.get("summaries_cleared", 0)
        report.rederive_job_ids += found.get("rederive_job_ids") or []
    return len(rows)


__all__ = [
    "LineageReport",
    "lineage_erase_conversation",
    "lineage_erase_memories",
    "lineage_erase_messages",
    "memory_delete_following_lineage",
    "memory_descendants",
    "memory_version_redact_following_lineage",
    "memory_redact_and_replace_following_lineage",
    "memory_versions_redact_following_lineage",
    "rederive_enqueue",
    "workspace_text_occurrences",
    "workspace_text_redact",
]
