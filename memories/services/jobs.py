"""Memory jobs: creation, dispatch and the one state machine.

    pending ──start──▶ running ──▶ succeeded
       │                  │  └────▶ failed ──retry──▶ pending
       └──cancel──▶ cancelled ◀─────┘ (cancel: at the next checkpoint)
                        └──retry──▶ pending

A running job may also go back to `pending` (a worker died: maintenance
requeues it). Every transition goes through `_transition`, which refuses the
rest with a 409.

A pending job's broker message can be lost (the broker was down when the
transaction committed, or restarted without persistence). Nothing in the
database tells a lost message from a slow queue, so a job left pending for
`PENDING_REDISPATCH_AFTER` is dispatched again, by maintenance and by the next
enqueue that finds it. For a pending job `updated_at` is the time of its last
dispatch: nothing else writes a pending row.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from memories.dispatch import memory_job_send
from memories.models import JobKind, JobStatus, MemoryJob
from memory_project.errors import ConflictError, NotFoundError

logger = logging.getLogger(__name__)

ALLOWED: dict[str, frozenset[str]] = {
    JobStatus.PENDING: frozenset({JobStatus.RUNNING, JobStatus.CANCELLED}),
    JobStatus.RUNNING: frozenset({JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED, JobStatus.PENDING}),
    JobStatus.FAILED: frozenset({JobStatus.PENDING}),
    JobStatus.CANCELLED: frozenset({JobStatus.PENDING}),
    JobStatus.SUCCEEDED: frozenset(),
}
FINISHED = frozenset({JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED})
MAX_ERROR_CHARS = 4000
# A dispatched job normally starts within seconds; even behind a backlog of LLM
# work (one job per worker process at a time) ten minutes of waiting is rare.
# Past that the message is taken as lost and sent again: a spare message costs
# nothing, since a re-dispatch only starts a job that is still pending (see
# `memory_job_start`), while a lost one would leave the scope stuck for good.
PENDING_REDISPATCH_AFTER = timedelta(minutes=10)


class JobCancelled(Exception):
    """Raised at a checkpoint when a cancel was requested; the job is already `cancelled`."""


def _transition(job: MemoryJob, to: str) -> None:
    if to not in ALLOWED[job.status]:
        raise ConflictError(f"Job '{job.pk}' is {job.status}; it cannot become {to}.")
    job.status = to


def lock_memory_job(*, job_id: str, workspace=None) -> MemoryJob:
    """The job row, locked. Call inside `transaction.atomic()`."""
    qs = MemoryJob.objects.select_for_update().filter(pk=job_id)
    if workspace is not None:
        qs = qs.filter(workspace=workspace)
    job = qs.first()
    if job is None:
        raise NotFoundError(f"No memory job '{job_id}'.")
    return job


def dispatch_on_commit(job_id: str, *, redispatch: bool = False) -> None:
    """Queue the job's task once the surrounding transaction commits.
    `redispatch` marks a message sent again for a pending job whose first one
    may be lost: it runs the job only if it is still pending."""
    transaction.on_commit(lambda: memory_job_send(job_id, redispatch=redispatch))


def _claim_redispatch(job_id: str, *, cutoff) -> bool:
    """Move a pending job's dispatch time to now if it is still before `cutoff`.
    A compare-and-set, so that of two concurrent callers only one sends a message."""
    return bool(
        MemoryJob.objects.filter(pk=job_id, status=JobStatus.PENDING, updated_at__lt=cutoff).update(
            updated_at=timezone.now()
        )
    )


def _pending_job(*, workspace_id: str | None, kind: str, scope: str | None, scope_id: str) -> QuerySet[MemoryJob]:
    """This scope's pending job of `kind` (a partial unique index allows one)."""
    return MemoryJob.objects.filter(
        workspace_id=workspace_id, kind=kind, scope=scope, scope_id=scope_id, status=JobStatus.PENDING
    )


def memory_job_pending_fresh(*, workspace_id: str, kind: str, scope: str | None, scope_id: str) -> bool:
    """Whether this scope's pending job of `kind` was dispatched within
    `PENDING_REDISPATCH_AFTER`: `memory_job_enqueue` would return it as it
    is. One look-up, outside any transaction, for a caller that enqueues often
    (each time a branch's backlog doubles)."""
    pending = _pending_job(workspace_id=workspace_id, kind=kind, scope=scope, scope_id=scope_id)
    return pending.filter(updated_at__gte=timezone.now() - PENDING_REDISPATCH_AFTER).exists()


def memory_job_enqueue(
    *, workspace, kind: str, scope: str | None = None, scope_id: str = "", payload: Mapping[str, Any] | None = None
) -> tuple[MemoryJob, bool]:
    """The pending job of this kind for this scope, created if there is none
    (a partial unique index allows one), dispatched after commit when created.
    An existing job last dispatched more than `PENDING_REDISPATCH_AFTER` ago is
    dispatched again (its message may be lost). Returns (job, created)."""
    # Maintenance jobs belong to no workspace.
    workspace_id = None if workspace is None else workspace.pk
    pending = _pending_job(workspace_id=workspace_id, kind=kind, scope=scope, scope_id=scope_id)
    with transaction.atomic():
        existing = pending.first()
        if existing is not None:
            if _claim_redispatch(existing.pk, cutoff=timezone.now() - PENDING_REDISPATCH_AFTER):
                logger.info("memory job %s pending since %s: dispatched again", existing.pk, existing.updated_at)
                dispatch_on_commit(existing.pk, redispatch=True)
            return existing, False
        try:
            with transaction.atomic():
                job = MemoryJob.objects.create(
                    workspace=workspace, kind=kind, scope=scope, scope_id=scope_id, payload=dict(payload or {})
                )
        except IntegrityError:
            # A concurrent enqueue won the partial unique index: theirs will run.
            existing = pending.first()
            if existing is None:
                raise
            return existing, False
        dispatch_on_commit(job.pk)
    return job, True


def memory_job_retry(*, workspace, job_id: str) -> MemoryJob:
    """A failed or cancelled job goes back to pending and is queued again.
    409 for any other status, or when another job for the scope is already pending."""
    with transaction.atomic():
        job = lock_memory_job(job_id=job_id, workspace=workspace)
        if job.status not in (JobStatus.FAILED, JobStatus.CANCELLED):
            raise ConflictError(f"Job '{job.pk}' is {job.status}: only failed or cancelled jobs can be retried.")
        _transition(job, JobStatus.PENDING)
        job.cancel_requested = False
        job.error = ""
        job.finished_at = None
        job.started_at = None
        job.attempts = 0
        try:
            with transaction.atomic():
                job.save(update_fields=["status", "cancel_requested", "error", "finished_at", "started_at", "attempts",
                                        "updated_at"])
        except IntegrityError:
            raise ConflictError(f"Another {job.kind} job for this scope is already pending.")
        dispatch_on_commit(job.pk)
    return job


def memory_job_cancel(*, workspace, job_id: str) -> MemoryJob:
    """Cancel a pending job at once; ask a running one to stop at its next
    checkpoint (it stays `running` with `cancel_requested` until then). 409 otherwise."""
    with transaction.atomic():
        job = lock_memory_job(job_id=job_id, workspace=workspace)
        if job.status == JobStatus.PENDING:
            _transition(job, JobStatus.CANCELLED)
            job.finished_at = timezone.now()
            job.cancel_requested = True
            job.save(update_fields=["status", "finished_at", "cancel_requested", "updated_at"])
        elif job.status == JobStatus.RUNNING:
            job.cancel_requested = True
            job.save(update_fields=["cancel_requested", "updated_at"])
        else:
            raise ConflictError(f"Job '{job.pk}' is {job.status}: only pending or running jobs can be cancelled.")
    return job


def memory_job_start(*, job_id: str, redispatch: bool = False) -> MemoryJob | None:
    """Claim the job for this worker: pending -> running, attempts + 1.

    A job already `running` is a redelivery after a worker died (acks_late):
    it is claimed again, and the work resumes from the scope's last committed
    checkpoint. A `redispatch` message only ever starts a pending job: if the
    job is running, the message it stood in for was not lost after all and a
    worker has it. Returns None when there is nothing to do (gone, finished,
    or a re-dispatch that found the job taken). A job past `max_attempts`
    fails instead of looping forever."""
    with transaction.atomic():
        job = MemoryJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status in FINISHED:
            return None
        if redispatch and job.status != JobStatus.PENDING:
            return None
        if job.status == JobStatus.PENDING:
            _transition(job, JobStatus.RUNNING)
            job.started_at = timezone.now()
        job.attempts += 1
        if job.attempts > job.max_attempts:
            _transition(job, JobStatus.FAILED)
            job.error = f"Gave up after {job.max_attempts} attempts (the worker stopped each time)."
            job.finished_at = timezone.now()
            job.save(update_fields=["status", "error", "finished_at", "attempts", "updated_at"])
            return None
        job.save(update_fields=["status", "started_at", "attempts", "updated_at"])
    return job


def memory_job_checkpoint(*, job: MemoryJob, heartbeat: bool = True) -> None:
    """Between units of work: stop here (-> cancelled) when a cancel was asked.
    Also refreshes `updated_at`, the heartbeat maintenance reads to find jobs
    whose worker died. `heartbeat=False`: the caller's last unit of work
    refreshed it already (`job_progress` in its transaction), so a job still
    running and not asked to stop costs one read and no transaction."""
    if not heartbeat:
        row = MemoryJob.objects.filter(pk=job.pk).values_list("status", "cancel_requested").first()
        if row is not None and row[0] == JobStatus.RUNNING and not row[1]:
            return
    cancelled = False
    with transaction.atomic():
        current = lock_memory_job(job_id=job.pk)
        if current.status != JobStatus.RUNNING:
            cancelled = True
        elif current.cancel_requested:
            _transition(current, JobStatus.CANCELLED)
            current.finished_at = timezone.now()
            current.save(update_fields=["status", "finished_at", "updated_at"])
            job.status = current.status
            cancelled = True
        else:
            current.save(update_fields=["updated_at"])
    # Raised after the block: the `cancelled` status must commit.
    if cancelled:
        raise JobCancelled(job.pk)


def job_progress(job: MemoryJob, *, counts: Mapping[str, int], input_tokens: int, output_tokens: int, provider: str) -> None:
    """Add a batch's counts and usage to the job. Call inside the batch's own
    transaction so that progress and writes commit together."""
    current = MemoryJob.objects.select_for_update().get(pk=job.pk)
    result = dict(current.result or {})
    for key, value in counts.items():
        result[key] = int(result.get(key, 0)) + int(value)
    current.result = result
    current.input_tokens += input_tokens
    current.output_tokens += output_tokens
    current.provider = provider
    current.save(update_fields=["result", "input_tokens", "output_tokens", "provider", "updated_at"])
    job.result, job.input_tokens, job.output_tokens, job.provider = (
        current.result, current.input_tokens, current.output_tokens, current.provider)


def memory_job_succeed(*, job: MemoryJob, result: Mapping[str, Any] | None = None) -> MemoryJob:
    with transaction.atomic():
        current = lock_memory_job(job_id=job.pk)
        if current.status != JobStatus.RUNNING:
            return current
        _transition(current, JobStatus.SUCCEEDED)
        if result:
            current.result = {**(current.result or {}), **result}
        current.finished_at = timezone.now()
        current.error = ""
        current.save(update_fields=["status", "result", "finished_at", "error", "updated_at"])
    return current


def memory_job_fail(*, job_id: str, error: str) -> MemoryJob | None:
    """Mark a job failed with its error (the task failure hook). A job already
    finished is left as it is."""
    with transaction.atomic():
        job = MemoryJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status in FINISHED:
            return job
        if job.status == JobStatus.PENDING:
            job.status = JobStatus.RUNNING  # a job that failed before starting still went through a run
        _transition(job, JobStatus.FAILED)
        job.error = error[:MAX_ERROR_CHARS]
        job.finished_at = timezone.now()
        job.save(update_fields=["status", "error", "finished_at", "updated_at"])
    logger.warning("memory job %s failed: %s", job_id, error[:200])
    return job


def memory_jobs_requeue_stale(*, older_than: timedelta) -> int:
    """Running jobs whose heartbeat stopped (their worker died and the broker did
    not redeliver) go back to pending and are queued again; if another job is
    already pending for the scope, the stale one is cancelled in its favour.
    Returns how many were requeued or cancelled."""
    cutoff = timezone.now() - older_than
    stale_ids = list(
        MemoryJob.objects.filter(status=JobStatus.RUNNING, updated_at__lt=cutoff)
        .exclude(kind=JobKind.MAINTENANCE)
        .values_list("pk", flat=True)[:500]
    )
    handled = 0
    for job_id in stale_ids:
        with transaction.atomic():
            job = MemoryJob.objects.select_for_update().filter(pk=job_id, status=JobStatus.RUNNING).first()
            if job is None or job.updated_at >= cutoff:
                continue
            try:
                with transaction.atomic():
                    _transition(job, JobStatus.PENDING)
                    job.save(update_fields=["status", "updated_at"])
                dispatch_on_commit(job.pk)
            except IntegrityError:
                job.status = JobStatus.RUNNING
                _transition(job, JobStatus.CANCELLED)
                job.error = "Superseded: the worker stopped and a newer job for this scope is pending."
                job.finished_at = timezone.now()
                job.save(update_fields=["status", "error", "finished_at", "updated_at"])
            handled += 1
    return handled


def memory_jobs_redispatch_pending(*, older_than: timedelta = PENDING_REDISPATCH_AFTER) -> int:
    """Dispatch again the pending jobs last dispatched before `older_than` ago:
    their broker message was probably lost. Maintenance jobs are left out (the
    running one is this sweep; a pending one is dispatched again by the next
    beat's enqueue). Returns how many were dispatched."""
    cutoff = timezone.now() - older_than
    pending_ids = list(
        MemoryJob.objects.filter(status=JobStatus.PENDING, updated_at__lt=cutoff)
        .exclude(kind=JobKind.MAINTENANCE)
        .order_by("updated_at")
        .values_list("pk", flat=True)[:500]
    )
    dispatched = 0
    for job_id in pending_ids:
        # One commit per job: each message goes out as soon as its job's new
        # dispatch time is stored, and a failure midway keeps those sent.
        with transaction.atomic():
            if _claim_redispatch(job_id, cutoff=cutoff):
                dispatch_on_commit(job_id, redispatch=True)
                dispatched += 1
    if dispatched:
        logger.warning("dispatched %d pending memory jobs again (their messages were probably lost)", dispatched)
    return dispatched
