"""Scope state: per (workspace, scope, scope_id) how far extraction has read,
what is waiting, and what the scope holds; and the requests that start work
on a scope (extraction when enough has gathered, manual rebuild and compact).

A scope's state moves clean -> dirty when messages arrive and back to clean
when extraction has read them all; `last_processed_floor_no` only moves
forward, and only in the same transaction as the memories written from those
floors (rebuild resets it to 0 in the transaction that removes them).
"""

from __future__ import annotations

import json
import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from memories.models import JobKind, LifecycleStatus, MemoryItem, MemoryJob, MemoryType, Scope, ScopeState, Status
from memories.services.jobs import memory_job_enqueue
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


def lock_scope_state(*, workspace, scope: str, scope_id: str, conversation=None) -> ScopeState:
    """The scope's state row, created if missing, locked. Call inside `transaction.atomic()`."""
    state = ScopeState.objects.select_for_update().filter(workspace=workspace, scope=scope, scope_id=scope_id).first()
    if state is not None:
        return state
    try:
        with transaction.atomic():
            ScopeState.objects.create(workspace=workspace, scope=scope, scope_id=scope_id, conversation=conversation)
    except IntegrityError:
        pass  # created concurrently; lock theirs
    return ScopeState.objects.select_for_update().get(workspace=workspace, scope=scope, scope_id=scope_id)


def extraction_due(state: ScopeState) -> bool:
    return state.pending_floors >= settings.MEMORY_EXTRACT_MIN_FLOORS or (
        state.pending_floors > 0 and state.pending_tokens >= settings.MEMORY_EXTRACT_MIN_TOKENS
    )


def scope_note_appended(*, workspace_id: str, conversation_id: int, branch_id: str, floors: int = 1, tokens: int = 0) -> None:
    """After a message append commits: count it against the branch scope and
    queue one extraction when enough new floors or tokens have gathered.

    Runs from `transaction.on_commit`, so it never delays or fails the append;
    an error here is logged, and maintenance picks dirty scopes up later."""
    from conversations.models import Branch

    try:
        branch = Branch.objects.select_related("conversation__workspace").filter(pk=branch_id).first()
        if branch is None or branch.conversation_id != conversation_id:
            return
        conversation = branch.conversation
        scope_id = branch_scope_id(conversation.external_id, branch.name)
        with transaction.atomic():
            state = lock_scope_state(
                workspace=conversation.workspace, scope=Scope.BRANCH, scope_id=scope_id, conversation=conversation
            )
            state.pending_floors += max(floors, 0)
            state.pending_tokens += max(tokens, 0)
            state.dirty = True
            state.save(update_fields=["pending_floors", "pending_tokens", "dirty", "updated_at"])
            if extraction_due(state):
                memory_job_enqueue(
                    workspace=conversation.workspace, kind=JobKind.EXTRACT, scope=Scope.BRANCH, scope_id=scope_id
                )
    except Exception:  # noqa: BLE001 - after commit: the append stands whatever happens here
        logger.exception("could not record appended floors for branch %s", branch_id)


def scope_note_cleared(*, workspace_id: str, conversation_id: int) -> None:
    """After a conversation's messages were cleared: nothing is waiting any more.
    Floor numbers are never reused, so `last_processed_floor_no` stays valid."""
    ScopeState.objects.filter(workspace_id=workspace_id, conversation_id=conversation_id).update(
        pending_floors=0, pending_tokens=0, dirty=False, updated_at=timezone.now()
    )


def scope_note_conversation_deleted(*, workspace_id: str, scope_ids: list[str]) -> None:
    """After a conversation was deleted: its queued extractions have nothing left to read."""
    from memories.services.jobs import memory_job_cancel

    for job_id in MemoryJob.objects.filter(
        workspace_id=workspace_id, scope=Scope.BRANCH, scope_id__in=scope_ids, status="pending"
    ).values_list("pk", flat=True):
        try:
            memory_job_cancel(workspace=MemoryJob.objects.get(pk=job_id).workspace, job_id=job_id)
        except Exception:  # noqa: BLE001 - it started or finished meanwhile; it will find nothing to read
            logger.info("job %s not cancelled after conversation delete", job_id)


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
    if not isinstance(scope_id, str) or len(scope_id) > 600 or (scope != Scope.GLOBAL and not scope_id):
        raise ValidationError("scope_id: required, a string of at most 600 characters.")
    return scope, scope_id


def _branch_or_404(*, workspace, scope_id: str):
    from conversations.selectors import branch_get, conversation_get

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
    conversation, _ = _branch_or_404(workspace=workspace, scope_id=scope_id)
    with transaction.atomic():
        lock_scope_state(workspace=workspace, scope=scope, scope_id=scope_id, conversation=conversation)
        job, _ = memory_job_enqueue(workspace=workspace, kind=JobKind.REBUILD, scope=scope, scope_id=scope_id)
    return job


def scope_compact_request(*, workspace, scope, scope_id) -> MemoryJob:
    """Queue a compaction of the scope's micro summaries now, whatever their count."""
    scope, scope_id = _clean_scope(scope, scope_id)
    conversation = None
    if scope == Scope.BRANCH:
        scope_id = branch_scope_id(*parse_branch_scope_id(scope_id))
        conversation, _ = _branch_or_404(workspace=workspace, scope_id=scope_id)
    elif not ScopeState.objects.filter(workspace=workspace, scope=scope, scope_id=scope_id).exists() and not (
        MemoryItem.objects.filter(workspace=workspace, scope=scope, scope_id=scope_id).exists()
    ):
        raise NotFoundError(f"No memories in scope {scope} {scope_id!r}.")
    with transaction.atomic():
        lock_scope_state(workspace=workspace, scope=scope, scope_id=scope_id, conversation=conversation)
        job, _ = memory_job_enqueue(
            workspace=workspace, kind=JobKind.COMPACT, scope=scope, scope_id=scope_id, payload={"force": True}
        )
    return job
