"""The dense-recall tests on a PostgreSQL with pgvector: the machine's own
PostgreSQL may lack the extension, so a pgvector server is started (see
tests/pgvector_server.py) and the tests run against it in a process of their
own (their test database is created there, the migration adds the vector
column). Once per suite, in the PostgreSQL run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pgvector_server import pgvector_server

ROOT = Path(__file__).resolve().parents[2]
SUITE = ["tests/memories/test_pgvector.py", "tests/memories/test_recall_vectors.py"]


@pytest.mark.postgres
@pytest.mark.slow
def test_dense_recall_on_postgresql_with_pgvector():
    with pgvector_server() as url:
        env = {**os.environ, "DATABASE_URL": url, "PGVECTOR_REQUIRED": "1",
               "SECRET_KEY": os.environ.get("SECRET_KEY", "test-only-secret-key-not-for-production")}
        env.pop("PYTEST_XDIST_WORKER", None)
        run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "0", *SUITE],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert " skipped" not in run.stdout.splitlines()[-1], run.stdout[-3000:]
