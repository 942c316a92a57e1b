"""A real Celery worker on Redis against the test database: appends through
the API, the job runs in the worker, the worker is SIGKILLed mid-job, and a
new worker finishes it with nothing written twice."""

from __future__ import annotations

import os
import signal
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings

from memories.models import MemoryItem, MemoryJob, ScopeState
from memories.services.scopes import branch_scope_id
from tests.celery_worker import start_worker, wait_for, worker_database_url

pytestmark = [pytest.mark.celery_worker, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]


def test_worker_killed_mid_job_is_finished_by_another_without_duplicates(api, workspace):
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "LLM_OFFLINE_DELAY_SECONDS": "0.8",
        "MEMORY_EXTRACT_BATCH_FLOORS": "5",
        "CELERY_VISIBILITY_TIMEOUT": "2",
    }
    from memory_project.celery import app

    app.control.purge()
    scope_id = branch_scope_id("killme", "main")
    with override_settings(MEMORY_EXTRACT_MIN_FLOORS=20):
        for i in range(20):
            plant = ["fern", "cactus", "orchid", "basil", "mint", "ivy", "lily", "aloe", "palm", "rose"][i // 2]
            content = f"I need to water the {plant} on the balcony." if i % 2 == 0 else f"My locker code is {1000 + i}."
            assert api.post("/v1/conversations/killme/messages", {"role": "user", "content": content},
                            format="json").status_code in (200, 201)
    job = MemoryJob.objects.get(kind="extract", scope_id=scope_id)

    first = start_worker(env)
    try:
        assert wait_for(lambda: ScopeState.objects.get(scope_id=scope_id).last_processed_floor_no >= 5, 30)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    job.refresh_from_db()
    assert job.status == "running"
    done_before = ScopeState.objects.get(scope_id=scope_id).last_processed_floor_no
    assert 5 <= done_before < 20

    second = start_worker({**env, "LLM_OFFLINE_DELAY_SECONDS": "0"})
    try:
        def finished():
            return MemoryJob.objects.get(pk=job.pk).status == "succeeded"

        if not wait_for(finished, 12):
            # The broker did not redeliver: maintenance's stale-job recovery does.
            from memories.services.jobs import memory_jobs_requeue_stale

            memory_jobs_requeue_stale(older_than=timedelta(seconds=0))
            assert wait_for(finished, 20)
    finally:
        os.killpg(second.pid, signal.SIGKILL)
        second.wait()

    job.refresh_from_db()
    assert job.attempts >= 2 and job.result["floors"] == 20
    state = ScopeState.objects.with_pending().get(scope_id=scope_id)
    assert state.last_processed_floor_no == 20 and not state.dirty
    micros = list(MemoryItem.objects.filter(scope_id=scope_id, summary_tier="micro").order_by("coverage_start_floor_no"))
    assert [(m.coverage_start_floor_no, m.coverage_end_floor_no) for m in micros] == [(1, 5), (6, 10), (11, 15), (16, 20)]
    loops = list(MemoryItem.objects.filter(scope_id=scope_id, type="open_loop").values_list("content", flat=True))
    assert len(loops) == len(set(loops)) == 10
    codes = MemoryItem.objects.filter(scope_id=scope_id, type="fact", fact_key="user.locker_code")
    assert codes.count() == 10 and codes.filter(status="active").count() == 1
