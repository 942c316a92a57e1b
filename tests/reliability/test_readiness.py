"""`/healthz` is liveness (the process and its database); `/readyz` is
readiness: the database, the Celery broker and a worker's heartbeat."""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache
from kombu import Connection

from memory_project.celery import app
from memory_project.readiness import HEARTBEAT_KEY, WORKER_STALE_SECONDS, heartbeat_record, worker_heartbeat_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_worker(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    cache.delete(HEARTBEAT_KEY)
    yield
    cache.delete(HEARTBEAT_KEY)


def test_healthz_is_liveness(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json()["status"] == "ok"


def test_readyz_needs_a_worker_heartbeat(client, with_worker):
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "not_ready"
    assert body["checks"]["database"]["ok"] and body["checks"]["broker"]["ok"]
    assert body["checks"]["worker"] == {"ok": False, "error": "no worker heartbeat yet"}
    worker_heartbeat_task.apply()  # what beat's tick makes a worker do
    response = client.get("/readyz")
    assert response.status_code == 200 and response.json()["status"] == "ready"
    assert response.json()["checks"]["worker"]["last_heartbeat_seconds_ago"] < 60
    assert response["Cache-Control"].startswith("max-age=0")


def test_a_stale_heartbeat_is_not_ready(client, with_worker):
    heartbeat_record()
    cache.set(HEARTBEAT_KEY, time.time() - WORKER_STALE_SECONDS - 5, timeout=None)
    assert client.get("/readyz").status_code == 503


def test_an_unreachable_broker_is_not_ready(client, with_worker, monkeypatch):
    heartbeat_record()
    # The broker's address comes from the settings once the app is configured
    # (CELERY_BROKER_URL outranks a later app.conf assignment), so the app is
    # handed a connection to a port where nothing listens.
    monkeypatch.setattr(app, "connection_for_write", lambda *args, **kwargs: Connection("redis://127.0.0.1:1/0"))
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["broker"]["ok"] is False


def test_eager_mode_needs_no_worker(client, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    assert client.get("/readyz").json()["checks"]["worker"] == {"ok": True, "mode": "eager"}


def test_beat_schedules_the_heartbeat(settings):
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "memory_project.readiness.worker_heartbeat_task" in tasks
