"""A real Celery worker subprocess against the test database, for the tests
that exercise production behaviour (PostgreSQL + Redis)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def worker_database_url() -> str:
    """The pytest-django test database as a DATABASE_URL, for a subprocess."""
    s = connection.settings_dict
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    return f"postgres://{s['USER']}{password}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def start_worker(env: dict[str, str]) -> subprocess.Popen:
    """One solo-pool worker in its own session, so the test can SIGKILL it alone."""
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "celery"), "-A", "memory_project", "worker", "--pool", "solo",
         "--without-heartbeat", "--without-gossip", "--without-mingle", "-l", "WARNING"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False
