"""Orchestration of memory jobs: extract, compact, rebuild, maintenance.

`memory_job_execute` is what the Celery task calls. Every runner follows the
same rhythm: read (no transaction), ask the language model (no transaction),
then one short atomic write that also moves the scope's checkpoint, so that a
job killed at any point leaves either a whole batch or nothing.
"""

from __future__ import annotations

import logging

from memories.llm import LLMError
from memories.models import JobKind
from memories.services.jobs import JobCancelled, memory_job_fail, memory_job_start, memory_job_succeed

logger = logging.getLogger(__name__)


def memory_job_execute(*, job_id: str, redispatch: bool = False) -> None:
    """Run one job to its end. Gone or finished jobs, and re-dispatched ones
    that are no longer pending, are skipped quietly; a provider failure marks
    the job failed with its error; anything else is raised for the task's
    retry policy and failure hook."""
    from memories.services.pipeline.compact import compact_run
    from memories.services.pipeline.extract import extract_run, rebuild_run
    from memories.services.pipeline.maintenance import maintenance_run

    runners = {
        JobKind.EXTRACT: extract_run,
        JobKind.REBUILD: rebuild_run,
        JobKind.COMPACT: compact_run,
        JobKind.MAINTENANCE: maintenance_run,
    }
    job = memory_job_start(job_id=job_id, redispatch=redispatch)
    if job is None:
        return
    try:
        result = runners[job.kind](job)
    except JobCancelled:
        logger.info("memory job %s cancelled at a checkpoint", job_id)
        return
    except LLMError as exc:
        memory_job_fail(job_id=job_id, error=f"{exc.__class__.__name__}: {exc}")
        return
    memory_job_succeed(job=job, result=result)
