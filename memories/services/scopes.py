"""Scope state: per (workspace, scope, scope_id) how far extraction has read,
what is waiting, and what the scope holds; and the requests that start work
on a scope (extraction when enough has gathered, manual rebuild and compact).

A branch scope is dirty while its branch has floors the pipeline has not read:
that is derived from the branch's counters (appended minus processed), which
the append moves in its own transaction and extraction moves through
`conversations.services.branch_mark_processed`. `last_processed_floor_no` only
moves forward, and only in the same transaction as the memories written from
those floors (rebuild resets it to 0 in the transaction that removes them).
"""

from __future__ import annotations

import contextlib
import json
import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q, Sum

from accounts.models import Workspace
from conversations.selectors.branches import branch_get
from conversations.selectors.conversations import conversation_get
from conversations.selectors.references import branch_exists
from memories.models import (
    MAX_SCOPE_ID_CHARS,
    JobKind,
    LifecycleStatus,
    MemoryItem,
    MemoryJob,
    MemoryType,
    Scope,
    ScopeState,
    Status,
)
from memories.services.jobs import memory_job_cancel, memory_job_enqueue, memory_job_pending_fresh
from memory_project.db import column, insert_objects, table
from memory_project.errors import NotFoundError, ValidationError

logger = logging.getLogger(__name__)

COMPACTABLE_SCOPES = (Scope.GLOBAL, Scope.CHAT, Scope.BRANCH, Scope.FLOOR)


def branch_scope_id(conversation_id: str, branch_name: str) -> str:
    """`JSON.stringify([conversation_id, branch])`, byte for byte (spec 003)."""
    return json.dumps([conversation_id, branch_name], ensure_ascii=False, separators=(",", ":"))


def parse_branch_scope_id(scope_id: str) -> tuple[str, str]:
    try:
        parts = json.loads(scope_id)
    except (TypeError, ValueError):
        parts = None
    if not (isinstance(parts, list) and len(parts) == 2 and all(isinstance(p, str) and p for p in parts)):
        raise ValidationError("scope_id: a branch scope id is JSON.stringify([conversation_id, branch]).")
    return parts[0], parts[1]


def lock_scope_state(*, workspace, scope: str, scope_id: str, conversation=None, branch=None) -> ScopeState:
    """The scope's state row, created if missing, locked. Call inside `transaction.atomic()`.

    A branch scope's row is linked to its branch (found from the scope id when
    not given), since its pending work is read from the branch's counters."""
    state = ScopeState.objects.select_for_update().filter(workspace=workspace, scope=scope, scope_id=scope_id).first()
    if state is not None:
        if scope == Scope.BRANCH and state.branch_id is None:
            branch = branch or _branch_of(workspace=workspace, scope_id=scope_id)
            if branch is not None:
                state.branch = branch
                state.save(update_fields=["branch", "updated_at"])
        return state
    if scope == Scope.BRANCH and branch is None:
        branch = _branch_of(workspace=workspace, scope_id=scope_id)
    if branch is not None and conversation is None:
        conversation = branch.conversation
    try:
        with transaction.atomic():
            ScopeState.objects.create(
                workspace=workspace, scope=scope, scope_id=scope_id, conversation=conversation, branch=branch
            )
    except IntegrityError:
        pass  # created concurrently; lock theirs
    return ScopeState.objects.select_for_update().get(workspace=workspace, scope=scope, scope_id=scope_id)


def scope_states_mark_erased(*, workspace, scopes) -> int:
    """Lock the state rows of these (scope, scope_id) pairs, ordered by pk, and
    move their `erasure_generation`. Call first in an erasure's transaction.

    An extraction reads a scope's generation before it reads its floors, and
    writes what it made of them only if the generation is the same under its
    lock of the row (`extract_run`). So either the extraction commits first,
    and the erasure, waiting on the lock, finds what it wrote; or the erasure
    commits first, and the extraction reads the floors again. Returns how
    many rows were marked."""
    query = Q()
    for scope, scope_id in scopes:
        query |= Q(scope=scope, scope_id=scope_id)
    if not query:
        return 0
    pks = list(ScopeState.objects.select_for_update().filter(query, workspace=workspace)
               .order_by("pk").values_list("pk", flat=True))
    return ScopeState.objects.filter(pk__in=pks).update(erasure_generation=F("erasure_generation") + 1)


def _branch_of(*, workspace, scope_id: str):

    try:
        conversation_id, branch_name = parse_branch_scope_id(scope_id)
    except ValidationError:
        return None
    conversation = conversation_get(workspace=workspace, external_id=conversation_id)
    return branch_get(conversation=conversation, name=branch_name) if conversation else None


def _crossed(before: int, after: int, step: int) -> bool:
    """`after` reached `step` times a power of two (1, 2, 4, 8 ...) that
    `before` had not."""
    if step <= 0 or after < step:
        return False
    multiple = after // step
    return 1 << (multiple.bit_length() - 1) > before // step


def extraction_due_after(*, floors_before: int, floors_after: int, tokens_before: int, tokens_after: int) -> bool:
    """Whether an append that took a branch's pending work from `*_before` to
    `*_after` crossed an extraction threshold: `MEMORY_EXTRACT_MIN_FLOORS`
    floors (not for a network model, see `billed_by_the_token`) or
    `MEMORY_EXTRACT_MIN_TOKENS` tokens. While a backlog grows
    (no worker keeps up, or its job was lost) it is due again each time the
    backlog doubles: a lost or failed job is queued again, and a backlog
    that a pending job will read anyway costs one look-up each time it
    doubles, not one per threshold's worth of appends. The idle sweep takes
    what stays below a threshold, and maintenance re-sends a job left
    pending."""
    if not billed_by_the_token() and _crossed(floors_before, floors_after, settings.MEMORY_EXTRACT_MIN_FLOORS):
        return True
    return floors_after > 0 and _crossed(tokens_before, tokens_after, settings.MEMORY_EXTRACT_MIN_TOKENS)


def billed_by_the_token() -> bool:
    """Whether extraction calls a network model. Its every call re-sends the
    instructions and the conversation's memory, so its batches wait for
    MEMORY_EXTRACT_MIN_TOKENS of new text (or the idle sweep), never for a
    count of floors: six short messages would cost a call of their own. The
    passages are searchable from the append on, whatever the batch."""
    return (settings.LLM_PROVIDER or "offline").lower() != "offline"


def scope_note_appended(*, event) -> None:
    """Receiver of `conversations.hooks.messages_appended` (after the append
    commits): queue one extraction of the branch scope when the append crossed
    a threshold. The decision is made from the counters the append returned,
    so most appends cost nothing here; the branch's first append also creates
    its scope state, so the scope is listed while it waits."""
    due = extraction_due_after(
        floors_before=event.pending_floors - event.floors,
        floors_after=event.pending_floors,
        tokens_before=event.pending_tokens - event.tokens,
        tokens_after=event.pending_tokens,
    )
    if not (due or event.opens_branch):
        return
    scope_id = branch_scope_id(event.external_id, event.branch.name)
    if event.opens_branch:
        _open_branch_scope(event=event, scope_id=scope_id)
    if due:
        # A backlog that doubled while the job queued for it still waits (no
        # worker has taken it yet) needs nothing more: that job reads it all.
        if memory_job_pending_fresh(workspace_id=event.workspace_id, kind=JobKind.EXTRACT, scope=Scope.BRANCH,
                                    scope_id=scope_id):
            return

        # Two look-ups by primary key: a join of branch, conversation and
        # workspace planned worse whenever the tables' statistics were stale.
        workspace = Workspace.objects.filter(pk=event.workspace_id).first()
        if workspace is None or not branch_exists(branch_id=event.branch.id):
            return  # deleted meanwhile
        # The job makes the scope state if it is still missing (extract_run).
        memory_job_enqueue(workspace=workspace, kind=JobKind.EXTRACT, scope=Scope.BRANCH, scope_id=scope_id)


def _open_branch_scope(*, event, scope_id: str) -> None:
    """The scope state of a branch's first append, in one statement from what
    the append reported. A state already there is kept; one left without a
    branch (its conversation deleted and made again under the same id) gets
    this one, as `lock_scope_state` would give it. It runs after the append's
    commit, outside a transaction, so the branch's (deferred) foreign-key
    check is this statement's own and a branch deleted meanwhile fails here."""
    state = ScopeState(workspace_id=event.workspace_id, scope=Scope.BRANCH, scope_id=scope_id,
                       conversation_id=event.conversation_id, branch_id=event.branch.id)
    with contextlib.suppress(IntegrityError):  # the branch was deleted meanwhile
        insert_objects(
            [state],
            on_conflict=("workspace", "scope", "scope_id"),
            update=("conversation", "branch", "updated_at"),
            update_where=f"{table(ScopeState)}.{column(ScopeState, 'branch')} IS NULL",
        )


def scope_note_conversation_deleted(*, event) -> None:
    """Receiver of `conversations.hooks.conversation_deleted`: the conversation's
    queued extractions have nothing left to read."""

    scope_ids = [branch_scope_id(event.external_id, branch.name) for branch in event.branches]
    for job in MemoryJob.objects.filter(
        workspace_id=event.workspace_id, scope=Scope.BRANCH, scope_id__in=scope_ids, status="pending"
    ).select_related("workspace"):
        try:
            memory_job_cancel(workspace=job.workspace, job_id=job.pk)
        except Exception:  # noqa: BLE001 - it started or finished meanwhile; it will find nothing to read
            logger.info("job %s not cancelled after conversation delete", job.pk)


def scope_refresh_totals(*, state: ScopeState) -> ScopeState:
    """Recount what the scope holds (live items, their tokens, active micro summaries)."""
    totals = MemoryItem.objects.filter(
        workspace_id=state.workspace_id, scope=state.scope, scope_id=state.scope_id
    ).aggregate(
        items=Count("pk", filter=Q(status=Status.ACTIVE)),
        tokens=Sum("token_count_estimate", filter=Q(status=Status.ACTIVE)),
        micros=Count(
            "pk",
            filter=Q(type=MemoryType.SUMMARY, summary_tier="micro", status=Status.ACTIVE,
                     lifecycle_status=LifecycleStatus.ACTIVE),
        ),
    )
    ScopeState.objects.filter(pk=state.pk).update(
        item_count=totals["items"] or 0, token_total=totals["tokens"] or 0, micro_count=totals["micros"] or 0
    )
    state.item_count, state.token_total, state.micro_count = totals["items"] or 0, totals["tokens"] or 0, totals["micros"] or 0
    return state


def _clean_scope(scope, scope_id) -> tuple[str, str]:
    if scope not in COMPACTABLE_SCOPES:
        raise ValidationError(f"scope: must be one of {', '.join(COMPACTABLE_SCOPES)}.")
    if not isinstance(scope_id, str) or len(scope_id) > MAX_SCOPE_ID_CHARS or (scope != Scope.GLOBAL and not scope_id):
        raise ValidationError(f"scope_id: required, a string of at most {MAX_SCOPE_ID_CHARS} characters.")
    return scope, scope_id


def _branch_or_404(*, workspace, scope_id: str):

    conversation_id, branch_name = parse_branch_scope_id(scope_id)
    conversation = conversation_get(workspace=workspace, external_id=conversation_id)
    branch = branch_get(conversation=conversation, name=branch_name) if conversation else None
    if branch is None:
        raise NotFoundError(f"No conversation branch for scope_id {scope_id}.")
    return conversation, branch


def scope_rebuild_request(*, workspace, scope, scope_id) -> MemoryJob:
    """Queue a rebuild: re-derive a branch scope from floor 1. Only branch scopes
    are derived from messages; others answer 400."""
    scope, scope_id = _clean_scope(scope, scope_id)
    if scope != Scope.BRANCH:
        raise ValidationError("scope: only branch scopes are derived from messages and can be rebuilt.")
    scope_id = branch_scope_id(*parse_branch_scope_id(scope_id))
    conversation, branch = _branch_or_404(workspace=workspace, scope_id=scope_id)
    with transaction.atomic():
        lock_scope_state(workspace=workspace, scope=scope, scope_id=scope_id, conversation=conversation, branch=branch)
        job, _ = memory_job_enqueue(workspace=workspace, kind=JobKind.REBUILD, scope=scope, scope_id=scope_id)
    return job


def scope_compact_request(*, workspace, scope, scope_id) -> MemoryJob:
    """Queue a compaction of the scope's micro summaries now, whatever their count."""
    scope, scope_id = _clean_scope(scope, scope_id)
    conversation = branch = None
    if scope == Scope.BRANCH:
        scope_id = branch_scope_id(*parse_branch_scope_id(scope_id))
        conversation, branch = _branch_or_404(workspace=workspace, scope_id=scope_id)
    elif not ScopeState.objects.filter(workspace=workspace, scope=scope, scope_id=scope_id).exists() and not (
        MemoryItem.objects.filter(workspace=workspace, scope=scope, scope_id=scope_id).exists()
    ):
        raise NotFoundError(f"No memories in scope {scope} {scope_id!r}.")
    with transaction.atomic():
        lock_scope_state(workspace=workspace, scope=scope, scope_id=scope_id, conversation=conversation, branch=branch)
        job, _ = memory_job_enqueue(
            workspace=workspace, kind=JobKind.COMPACT, scope=scope, scope_id=scope_id, payload={"force": True}
        )
    return job
