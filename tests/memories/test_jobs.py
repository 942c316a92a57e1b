"""Jobs and scope state over REST, and the job state machine."""

from __future__ import annotations

import pytest

from memories.models import MemoryJob, ScopeState
from memories.services import jobs as job_services
from memories.services.jobs import JobCancelled, memory_job_checkpoint, memory_job_start
from memories.services.scopes import branch_scope_id
from memory_project.errors import ConflictError
from tests.factories import append_messages

pytestmark = pytest.mark.django_db


def _job(workspace, status="pending", kind="extract", scope_id='["c","main"]'):
    return MemoryJob.objects.create(workspace=workspace, kind=kind, scope="branch", scope_id=scope_id, status=status)


def test_list_filters_and_meta(api, workspace, other_workspace, django_assert_max_num_queries):
    _job(workspace, "failed")
    _job(workspace, "succeeded", kind="compact")
    _job(other_workspace, "failed")
    with django_assert_max_num_queries(4):
        body = api.get("/v1/memory_jobs", {"status": "failed", "limit": 5}).json()
    assert body["meta"] == {"total": 1, "limit": 5, "offset": 0, "has_more": False, "total_exact": True}
    assert body["data"][0]["status"] == "failed" and body["data"][0]["scope_id"] == '["c","main"]'
    assert api.get("/v1/memory_jobs", {"kind": "compact"}).json()["meta"]["total"] == 1
    assert api.get("/v1/memory_jobs", {"status": "bogus"}).status_code == 400


def test_get_is_workspace_scoped(api, workspace, other_workspace):
    mine, theirs = _job(workspace), _job(other_workspace)
    assert api.get(f"/v1/memory_jobs/{mine.pk}").json()["data"]["id"] == mine.pk
    assert api.get(f"/v1/memory_jobs/{theirs.pk}").status_code == 404


def test_retry_and_cancel_transitions(api, workspace, django_capture_on_commit_callbacks):
    failed = _job(workspace, "failed")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api.post(f"/v1/memory_jobs/{failed.pk}/retry")
    assert response.status_code == 200 and response.json()["data"]["status"] == "pending"
    assert len(callbacks) == 1  # dispatched after commit
    # Pending -> cancelled at once; then retry is allowed again.
    assert api.post(f"/v1/memory_jobs/{failed.pk}/cancel").json()["data"]["status"] == "cancelled"
    assert api.post(f"/v1/memory_jobs/{failed.pk}/cancel").status_code == 409
    succeeded = _job(workspace, "succeeded", kind="compact")
    for verb in ("retry", "cancel"):
        response = api.post(f"/v1/memory_jobs/{succeeded.pk}/{verb}")
        assert response.status_code == 409 and response.json()["error"]["type"] == "conflict_error"


def test_retry_refused_when_another_is_pending(api, workspace):
    _job(workspace, "pending")
    failed = _job(workspace, "failed")
    assert api.post(f"/v1/memory_jobs/{failed.pk}/retry").status_code == 409
    assert MemoryJob.objects.get(pk=failed.pk).status == "failed"


def test_running_job_cancel_stops_at_next_checkpoint(api, workspace):
    job = _job(workspace)
    job = memory_job_start(job_id=job.pk)
    assert job.status == "running" and job.attempts == 1
    data = api.post(f"/v1/memory_jobs/{job.pk}/cancel").json()["data"]
    assert data["status"] == "running" and data["cancel_requested"] is True
    with pytest.raises(JobCancelled):
        memory_job_checkpoint(job=job)
    assert MemoryJob.objects.get(pk=job.pk).status == "cancelled"


def test_state_machine_refuses_illegal_transitions(workspace):
    job = _job(workspace, "succeeded")
    with pytest.raises(ConflictError):
        job_services._transition(job, "running")
    assert memory_job_start(job_id=job.pk) is None  # finished: nothing to do
    assert job_services.memory_job_fail(job_id=job.pk, error="x").status == "succeeded"


def test_redelivered_running_job_is_reclaimed_until_max_attempts(workspace):
    job = _job(workspace)
    for _ in range(job.max_attempts):
        assert memory_job_start(job_id=job.pk) is not None
    assert memory_job_start(job_id=job.pk) is None
    job.refresh_from_db()
    assert job.status == "failed" and "attempts" in job.error


def test_enqueue_coalesces_into_one_pending_job(workspace):
    first, created = job_services.memory_job_enqueue(workspace=workspace, kind="extract", scope="branch", scope_id="x")
    second, created_again = job_services.memory_job_enqueue(workspace=workspace, kind="extract", scope="branch", scope_id="x")
    assert created and not created_again and first.pk == second.pk


def test_scopes_list_rebuild_and_compact(api, workspace, django_assert_max_num_queries,
                                        django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        append_messages(workspace, "c1", [{"role": "user", "content": "I live in Oslo."}])
    scope_id = branch_scope_id("c1", "main")
    assert scope_id == '["c1","main"]'
    state = ScopeState.objects.with_pending().get(workspace=workspace, scope_id=scope_id)
    assert state.pending_floors == 1 and state.dirty
    with django_assert_max_num_queries(4):
        body = api.get("/v1/memory_scopes").json()
    assert body["meta"]["total"] == 1 and body["data"][0]["scope_id"] == scope_id
    response = api.post("/v1/memory_scopes/rebuild", {"scope": "branch", "scope_id": scope_id}, format="json")
    assert response.status_code == 202 and response.json()["data"]["kind"] == "rebuild"
    response = api.post("/v1/memory_scopes/compact", {"scope": "branch", "scope_id": scope_id}, format="json")
    assert response.status_code == 202 and response.json()["data"]["kind"] == "compact"
    # A second request reuses the pending job.
    again = api.post("/v1/memory_scopes/compact", {"scope": "branch", "scope_id": scope_id}, format="json")
    assert again.json()["data"]["id"] == response.json()["data"]["id"]


@pytest.mark.parametrize("body,code", [
    ({"scope": "branch", "scope_id": "not json"}, 400),
    ({"scope": "store", "scope_id": "x"}, 400),
    ({"scope": "chat", "scope_id": "c1"}, 400),  # rebuild: only branch scopes
    ({"scope": "branch", "scope_id": '["ghost","main"]'}, 404),
    ({"scope": "branch"}, 400),
])
def test_rebuild_bad_input(api, workspace, body, code):
    response = api.post("/v1/memory_scopes/rebuild", body, format="json")
    assert response.status_code == code
    assert not MemoryJob.objects.exists()


def test_read_only_key_cannot_retry(readonly_api, workspace):
    job = _job(workspace, "failed")
    assert readonly_api.post(f"/v1/memory_jobs/{job.pk}/retry").status_code == 403
    assert readonly_api.get("/v1/memory_jobs").status_code == 200


def test_the_dirty_filter_takes_only_a_boolean(api, workspace, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        append_messages(workspace, "c-dirty", [{"role": "user", "content": "I live in Oslo."}])
    assert [s["scope_id"] for s in api.get("/v1/memory_scopes", {"dirty": "true"}).json()["data"]] == ['["c-dirty","main"]']
    assert api.get("/v1/memory_scopes", {"dirty": "false"}).json()["data"] == []
    for bad in ("null", "maybe"):
        assert api.get("/v1/memory_scopes", {"dirty": bad}).status_code == 400, bad


@pytest.mark.parametrize("url", ["/v1/memory_jobs?kind=", "/v1/memory_jobs?status=", "/v1/memory_scopes?scope=",
                                 "/v1/memory_scopes?dirty="])
def test_a_filter_given_without_a_value_is_a_400(api, url):
    response = api.get(url)
    assert response.status_code == 400 and "must not be empty" in response.json()["error"]["message"]
