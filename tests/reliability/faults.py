"""Real faults for the fault tests: a database backend terminated by
`pg_terminate_backend` at a chosen query, and a private Redis server (its own
loopback port, no persistence) that can be stopped and started again."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
from django.db import connection

from tests.celery_worker import start_worker, wait_for  # noqa: F401 - the fault tests use them through this module
from tests.celery_worker import worker_database_url as database_url  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


def _admin_dsn() -> str:
    s = connection.settings_dict
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    return f"postgresql://{s['USER']}{password}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"




def terminate_backend(pid: int) -> None:
    """Kill a PostgreSQL backend from another connection and wait until it is gone."""
    with psycopg.connect(_admin_dsn(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        for _ in range(100):
            if admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()[0] == 0:
                return
            time.sleep(0.02)


@contextlib.contextmanager
def backend_killed_at(query_number: int) -> Iterator[list[str]]:
    """Terminate this thread's database backend just before its
    `query_number`-th query (1-based) inside the block. Yields the SQL seen.

    Afterwards the connection is closed, as Django's `request_started` handler
    does for a broken connection before the next request."""
    seen: list[str] = []

    def wrapper(execute, sql, params, many, context):
        seen.append(sql)
        if len(seen) == query_number:
            terminate_backend(context["connection"].connection.info.backend_pid)
        return execute(sql, params, many, context)

    try:
        with connection.execute_wrapper(wrapper):
            yield seen
    finally:
        connection.close()


class PrivateRedis:
    """A redis-server of our own on a loopback port, never the shared one."""

    def __init__(self, port: int):
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"

    def start(self) -> None:
        subprocess.run(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "yes", "--logfile", os.devnull],
            check=True,
        )
        self._wait(up=True)

    def stop(self) -> None:
        subprocess.run(["redis-cli", "-p", str(self.port), "shutdown", "nosave"], capture_output=True)
        self._wait(up=False)

    def queued(self, queue: str = "celery") -> int:
        out = subprocess.run(["redis-cli", "-p", str(self.port), "llen", queue], capture_output=True, text=True)
        return int(out.stdout.strip() or 0)

    def _wait(self, *, up: bool) -> None:
        for _ in range(100):
            with socket.socket() as s:
                if (s.connect_ex(("127.0.0.1", self.port)) == 0) == up:
                    return
            time.sleep(0.05)
        raise RuntimeError(f"redis on {self.port} did not {'start' if up else 'stop'}")

    @staticmethod
    def available() -> bool:
        return shutil.which("redis-server") is not None and shutil.which("redis-cli") is not None


@contextlib.contextmanager
def celery_broker(url: str) -> Iterator[None]:
    """Point this process's Celery producer at `url` for the block."""
    from memory_project.celery import app

    def reset() -> None:
        # Dropped, not closed: kombu's producer pools are shared per connection
        # URL across the process, and a closed one cannot be handed out again.
        app._pool = None
        app.amqp._producer_pool = None

    # Celery reads CELERY_BROKER_URL from the environment before its own conf.
    old, old_env = app.conf.broker_url, os.environ.get("CELERY_BROKER_URL")
    app.conf.broker_url = os.environ["CELERY_BROKER_URL"] = url
    reset()
    try:
        yield
    finally:
        app.conf.broker_url = old
        if old_env is None:
            os.environ.pop("CELERY_BROKER_URL", None)
        else:
            os.environ["CELERY_BROKER_URL"] = old_env
        reset()


