"""Periodic maintenance (one job per beat tick, workspace-less)."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Workspace
from conversations.selectors.branches import branches_idle_with_pending
from conversations.selectors.references import conversations_idle_since
from conversations.services import conversation_delete
from memories.models import JobKind, MemoryItem, MemoryJob, Scope, ScopeState
from memories.services.jobs import (
    PENDING_REDISPATCH_AFTER,
    memory_job_checkpoint,
    memory_job_enqueue,
    memory_jobs_redispatch_pending,
    memory_jobs_requeue_stale,
)
from memories.services.lineage.routes import memories_expire_following_lineage
from memories.services.scopes import branch_scope_id, lock_scope_state
from memories.services.versioning import versions_purge_expired

logger = logging.getLogger(__name__)

# A running job writes a heartbeat at every batch; a batch takes well under a
# minute even with a slow model, so ten minutes of silence means its worker died.
STALE_RUNNING_AFTER = timedelta(minutes=10)
# Per run, at most this many of each kind of work item: a run stays short and
# the next tick takes the rest.
MAX_PER_RUN = 500
DELETE_CHUNK = 100


def _enqueue_due(now) -> tuple[int, int]:
    compact = 0
    due_compaction = ScopeState.objects.filter(micro_count__gte=max(1, settings.MEMORY_COMPACT_MIN_MICROS)).select_related("workspace")
    for state in due_compaction[:MAX_PER_RUN]:
        _, created = memory_job_enqueue(workspace=state.workspace, kind=JobKind.COMPACT, scope=state.scope,
                                        scope_id=state.scope_id)
        compact += created
    return compact, idle_branches_extract(now=now)


def idle_branches_extract(*, now=None) -> int:
    """Queue the extraction of branches that went quiet below the thresholds:
    the last turns of a conversation must not wait for more turns that may
    never come. Quiet means no append for `MEMORY_IDLE_EXTRACT_SECONDS`."""
    now = now or timezone.now()
    extract = 0
    idle_after = timedelta(seconds=max(1, settings.MEMORY_IDLE_EXTRACT_SECONDS))
    # Pending work is read off the branches' counters (appended minus processed).
    idle = branches_idle_with_pending(idle_before=now - idle_after, limit=MAX_PER_RUN)
    workspaces = Workspace.objects.in_bulk({row.workspace_id for row in idle})
    for row in idle:
        scope_id = branch_scope_id(row.external_id, row.branch_name)
        with transaction.atomic():
            lock_scope_state(workspace=workspaces[row.workspace_id], scope=Scope.BRANCH, scope_id=scope_id)
            _, created = memory_job_enqueue(workspace=workspaces[row.workspace_id], kind=JobKind.EXTRACT,
                                            scope=Scope.BRANCH, scope_id=scope_id)
        extract += created
    return extract


def items_sweep_expired(*, now=None) -> int:
    """Erase items past `expires_at` (LangGraph store TTLs) through lineage
    (`memories_expire_following_lineage`): each deletion writes its version,
    the earlier versions are redacted, what was compacted from them goes."""

    now = now or timezone.now()
    rows = list(MemoryItem.objects.filter(expires_at__lt=now).values_list("workspace_id", "pk")[:MAX_PER_RUN * 4])
    by_workspace: dict[str, list[str]] = {}
    for workspace_id, pk in rows:
        by_workspace.setdefault(workspace_id, []).append(pk)

    deleted = 0
    for workspace in Workspace.objects.filter(pk__in=list(by_workspace)):
        ids = by_workspace[workspace.pk]
        for start in range(0, len(ids), DELETE_CHUNK):
            report = memories_expire_following_lineage(workspace=workspace, actor=Actor.system(),
                                                       ids=ids[start:start + DELETE_CHUNK])
            deleted += len(set(report.memory_ids) & set(ids))
    return deleted


def conversations_expire(*, now=None) -> int:
    """Delete conversations with no message for `MEMORY_CONVERSATION_EXPIRE_DAYS`
    (0 = never), through the conversation service."""

    days = settings.MEMORY_CONVERSATION_EXPIRE_DAYS
    if days <= 0:
        return 0
    cutoff = (now or timezone.now()) - timedelta(days=days)
    stale = conversations_idle_since(cutoff=cutoff, limit=MAX_PER_RUN)
    deleted = 0
    for conversation in stale:
        try:
            conversation_delete(workspace=conversation.workspace, external_id=conversation.external_id)
            deleted += 1
        except Exception:  # noqa: BLE001 - deleted concurrently; the rest still go
            logger.info("conversation %s not expired", conversation.pk)
    return deleted


def maintenance_run(job: MemoryJob) -> dict:

    now = timezone.now()
    result: dict[str, int] = {"requeued": memory_jobs_requeue_stale(older_than=STALE_RUNNING_AFTER)}
    memory_job_checkpoint(job=job)
    result["redispatched"] = memory_jobs_redispatch_pending(older_than=PENDING_REDISPATCH_AFTER)
    memory_job_checkpoint(job=job)
    result["compact_queued"], result["extract_queued"] = _enqueue_due(now)
    memory_job_checkpoint(job=job)
    result["versions_purged"] = versions_purge_expired(now=now)
    memory_job_checkpoint(job=job)
    result["items_expired"] = items_sweep_expired(now=now)
    memory_job_checkpoint(job=job)
    result["conversations_expired"] = conversations_expire(now=now)
    return result
