"""Celery tasks: thin. They take ids, re-fetch, and call one service.

Jobs are idempotent (each batch commits with the scope's checkpoint), so the
tasks run with `acks_late`: a worker killed mid-job leaves the message to be
delivered again, and the job resumes from its last checkpoint.
"""

from __future__ import annotations

from celery import Task, shared_task
from django.db import InterfaceError, OperationalError

from memories.models import JobKind
from memories.recall.dense import recall_embed_pending
from memories.services.jobs import memory_job_enqueue, memory_job_fail
from memories.services.lineage.receivers import lineage_event_replay
from memories.services.pipeline.execute import memory_job_execute
from memories.services.pipeline.maintenance import idle_branches_extract

# Database hiccups are worth retrying; everything else fails the job.
TRANSIENT_ERRORS = (OperationalError, InterfaceError)


class MemoryJobTask(Task):
    """Marks the job failed, with its error, when the task fails for good."""

    def on_failure(self, exc, task_id, args, kwargs, einfo):  # noqa: D401 - Celery hook
        job_id = kwargs.get("job_id") or (args[0] if args else None)
        if job_id:
            memory_job_fail(job_id=job_id, error=f"{exc.__class__.__name__}: {exc}")


@shared_task(
    base=MemoryJobTask,
    acks_late=True,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=5,
    bind=True,
)
def process_memory_job_task(self: Task, job_id: str, redispatch: bool = False) -> None:
    # A retry of a re-dispatch may find the job `running` from its own first
    # try: only the first try is limited to a still-pending job.
    memory_job_execute(job_id=job_id, redispatch=redispatch and not self.request.retries)


@shared_task(acks_late=True)
def schedule_maintenance_task() -> None:
    """Beat's entry point: queue one maintenance job (a pending one is reused)."""
    memory_job_enqueue(workspace=None, kind=JobKind.MAINTENANCE)


@shared_task(autoretry_for=TRANSIENT_ERRORS, retry_backoff=2, max_retries=5, ignore_result=True)
def embed_recall_entries_task(workspace_id: int) -> None:
    """Vectors for the workspace's recall entries that have none yet (idempotent:
    it only fills what is missing, so duplicate messages cost a look, not work)."""

    recall_embed_pending(workspace_id=workspace_id)


@shared_task(acks_late=True, ignore_result=True)
def extract_idle_branches_task() -> None:
    """Beat's minute tick: queue extraction of conversations that went quiet."""

    idle_branches_extract()


@shared_task(acks_late=True, autoretry_for=TRANSIENT_ERRORS, retry_backoff=2, retry_backoff_max=60, max_retries=5,
             ignore_result=True)
def erase_lineage_task(signal_name: str, event: dict) -> None:
    """Lineage erasure that its receiver could not finish in the request (see
    `memories.services.lineage.lineage_receiver`): run again from the event's
    ids. Idempotent: what was erased already is simply not found again."""

    lineage_event_replay(signal_name=signal_name, event=event)
