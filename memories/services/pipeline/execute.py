"""Running one memory job: the runner for its kind, then its outcome."""

from __future__ import annotations

import logging

from memories.llm import LLMError
from memories.models import JobKind
from memories.services.jobs import JobCancelled, memory_job_fail, memory_job_start, memory_job_succeed
from memories.services.lineage.rederive import rederive_run
from memories.services.pipeline.compact import compact_run
from memories.services.pipeline.extract import extract_run, rebuild_run
from memories.services.pipeline.maintenance import maintenance_run

logger = logging.getLogger(__name__)


def _rebuild(job) -> dict:
    # A rebuild from a floor (lineage erasure) re-derives only what follows it.
    return rederive_run(job) if job.payload.get("from_floor_no") is not None else rebuild_run(job)


def memory_job_execute(*, job_id: str, redispatch: bool = False) -> None:
    """Run one job to its end. Gone or finished jobs, and re-dispatched ones
    that are no longer pending, are skipped quietly; a provider failure marks
    the job failed with its error; anything else is raised for the task's
    retry policy and failure hook."""

    runners = {
        JobKind.EXTRACT: extract_run,
        JobKind.REBUILD: _rebuild,
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
