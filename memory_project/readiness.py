"""Whether the service can do its work, not only answer: the database, the
Celery broker, and a worker that has consumed a task lately.

`/healthz` is liveness (the web process and its database answer);
`/readyz` is readiness: a worker proves itself by running
`worker_heartbeat_task`, which beat queues every `WORKER_HEARTBEAT_SECONDS`
and which records its time in the shared cache (and a worker records one as
it starts). With `CELERY_TASK_ALWAYS_EAGER` tasks run in the web process and
no worker is needed."""

from __future__ import annotations

import time
from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.core.cache import cache
from django.db import connection

from memory_project.celery import app

HEARTBEAT_KEY = "readiness:worker-heartbeat"
# Beat queues a heartbeat this often; a worker is taken for gone after
# missing a few (a long extraction holds the only process of `make run`'s
# worker for a while).
WORKER_HEARTBEAT_SECONDS = 30
WORKER_STALE_SECONDS = 180
BROKER_TIMEOUT_SECONDS = 2.0


def heartbeat_record() -> None:
    cache.set(HEARTBEAT_KEY, time.time(), timeout=None)


@shared_task(ignore_result=True, expires=WORKER_HEARTBEAT_SECONDS)
def worker_heartbeat_task() -> None:
    """Beat's heartbeat: whichever worker runs it is alive and consuming."""
    heartbeat_record()


@worker_ready.connect
def _worker_started(**_kwargs: Any) -> None:
    heartbeat_record()


def _database() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # noqa: BLE001 - any failure means not ready; the reason is reported
        return {"ok": False, "error": type(exc).__name__}
    return {"ok": True, "vendor": connection.vendor}


def _broker() -> dict[str, Any]:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"ok": True, "transport": "eager"}
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=0, timeout=BROKER_TIMEOUT_SECONDS)
            transport = conn.transport_cls
    except Exception as exc:  # noqa: BLE001 - any failure means not ready
        return {"ok": False, "error": type(exc).__name__}
    return {"ok": True, "transport": str(transport)}


def _worker(now: float) -> dict[str, Any]:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"ok": True, "mode": "eager"}
    try:
        beat = cache.get(HEARTBEAT_KEY)
    except Exception as exc:  # noqa: BLE001 - an unreachable cache hides the heartbeat
        return {"ok": False, "error": type(exc).__name__}
    if beat is None:
        return {"ok": False, "error": "no worker heartbeat yet"}
    age = max(0.0, now - float(beat))
    return {"ok": age <= WORKER_STALE_SECONDS, "last_heartbeat_seconds_ago": round(age, 1)}


def readiness_report(now: float | None = None) -> dict[str, Any]:
    """{"status": "ready" | "not_ready", "checks": {database, broker, worker}}."""
    checks = {"database": _database(), "broker": _broker(), "worker": _worker(now or time.time())}
    ready = all(check["ok"] for check in checks.values())
    return {"status": "ready" if ready else "not_ready", "checks": checks}
