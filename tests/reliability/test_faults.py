"""Faults on PostgreSQL: a database backend killed in the middle of a request,
and the Celery broker gone while messages are appended. Nothing is lost and
nothing is written twice: a request is applied or answered 503 (retryable)."""

from __future__ import annotations

import os
import signal
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from conversations.models import Message
from memories.models import MemoryItem, MemoryJob, MemoryVersion
from memories.services.jobs import PENDING_REDISPATCH_AFTER
from tests.conversations.helpers import append
from tests.reliability import faults
from tests.web_server import free_port

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _assert_retryable_503(response) -> None:
    assert response.status_code == 503, response.content[:300]
    assert response.json()["error"]["type"] == "overloaded_error"
    assert int(response["Retry-After"]) >= 1


def test_backend_killed_at_every_query_of_an_append(api):
    assert append(api, "faulty", idempotency_key="warm-up", content="first").status_code == 201  # the conversation exists
    with CaptureQueriesContext(connection) as queries:
        assert append(api, "faulty", idempotency_key="count-me", content="second").status_code == 201
    for number in range(1, len(queries) + 1):
        key = f"kill-{number}"
        with faults.backend_killed_at(number):
            response = append(api, "faulty", idempotency_key=key, content=f"at query {number}")
        assert response.status_code in (201, 503), (number, response.status_code, response.content[:300])
        if response.status_code == 503:
            _assert_retryable_503(response)
            assert not Message.objects.filter(idempotency_key=key).exists(), f"half-applied at query {number}"
        # The client retries with the same key: exactly one message either way.
        retry = append(api, "faulty", idempotency_key=key, content=f"at query {number}")
        assert retry.status_code in (200, 201), retry.content[:300]
        assert Message.objects.filter(idempotency_key=key).count() == 1
    floors = list(Message.objects.order_by("floor_no").values_list("floor_no", flat=True))
    assert floors == list(range(1, len(floors) + 1))


def test_backend_killed_during_a_memory_write(api):
    body = {"scope": "global", "type": "fact", "content": "durable"}
    with CaptureQueriesContext(connection) as queries:
        first = api.post("/v1/memories", body, format="json")
    assert first.status_code == 201
    for number in range(1, len(queries) + 1):
        before = MemoryItem.objects.count()
        content = f"write {number}"
        with faults.backend_killed_at(number):
            response = api.post("/v1/memories", {**body, "content": content}, format="json")
        created = MemoryItem.objects.filter(content=content)
        if response.status_code == 503:
            _assert_retryable_503(response)
            assert MemoryItem.objects.count() == before and not created.exists()
        else:
            assert response.status_code == 201 and created.count() == 1
            assert MemoryVersion.objects.filter(memory_id=created.get().pk).count() == 1


def test_backend_killed_on_paths_outside_the_api(client):
    with faults.backend_killed_at(1):
        response = client.get("/healthz")
    _assert_retryable_503(response)
    assert client.get("/healthz").status_code == 200

    get_user_model().objects.create_superuser("ops", "ops@example.com", "a-long-password-123")
    admin = Client()
    admin.login(username="ops", password="a-long-password-123")
    with faults.backend_killed_at(1):
        response = admin.get("/admin/memories/memoryitem/")
    _assert_retryable_503(response)
    assert admin.get("/admin/memories/memoryitem/").status_code == 200


@pytest.fixture
def private_redis():
    if not faults.PrivateRedis.available():
        pytest.skip("redis-server is not installed")
    redis = faults.PrivateRedis(free_port())
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()


@pytest.mark.slow
@pytest.mark.celery_worker
@pytest.mark.parametrize("fault", ["broker_down_during_append", "broker_restarted_with_job_queued"])
def test_lost_dispatch_is_recovered_by_maintenance(api, settings, private_redis, fault):
    """The append succeeds whatever the broker does; the extraction it made due
    still runs once the broker is back (maintenance dispatches again a job left
    pending too long)."""
    settings.MEMORY_EXTRACT_MIN_FLOORS = 3
    scope_filter = {"kind": "extract", "scope": "branch"}
    with faults.celery_broker(private_redis.url):
        for n in range(2):
            assert append(api, "faulty", idempotency_key=f"m{n}", content=f"I like plant number {n}.").status_code == 201
        if fault == "broker_down_during_append":
            private_redis.stop()
            response = append(api, "faulty", idempotency_key="m2", content="My locker code is 4242.")
            assert response.status_code == 201, response.content[:300]
            private_redis.start()
        else:
            assert append(api, "faulty", idempotency_key="m2", content="My locker code is 4242.").status_code == 201
            assert private_redis.queued() == 1
            private_redis.stop()  # no persistence: the queued message is gone
            private_redis.start()
        assert private_redis.queued() == 0
        job = MemoryJob.objects.get(**scope_filter)
        assert job.status == "pending"
        assert Message.objects.filter(conversation__external_id="faulty").count() == 3
        # Time passes: the job has waited long enough for its message to count as lost.
        MemoryJob.objects.filter(pk=job.pk).update(
            updated_at=timezone.now() - PENDING_REDISPATCH_AFTER - timedelta(seconds=1)
        )

        env = {
            **os.environ,
            "DATABASE_URL": faults.database_url(),
            "CELERY_BROKER_URL": private_redis.url,
            "MEMORY_EXTRACT_MIN_FLOORS": "3",
        }
        worker = faults.start_worker(env)
        try:
            from memories.tasks import schedule_maintenance_task

            schedule_maintenance_task.delay()
            recovered = faults.wait_for(lambda: MemoryJob.objects.get(pk=job.pk).status == "succeeded", 30)
        finally:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    maintenance = MemoryJob.objects.filter(kind="maintenance").values_list("status", flat=True)
    assert list(maintenance) == ["succeeded"], "the worker should have run maintenance"
    assert recovered, f"extract job still {MemoryJob.objects.get(pk=job.pk).status} after maintenance"
    assert MemoryJob.objects.filter(**scope_filter).count() == 1
