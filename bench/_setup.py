"""Database set-up shared by the in-process benchmarks.

A fresh database per run, named after the benchmark: a SQLite file under
MEMORY_VAR_DIR (default), or, when DATABASE_URL is set, a PostgreSQL database
`bench_<name>` on that server (dropped and re-created).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent


def prepare_database(name: str) -> None:
    """Point the settings at a fresh `bench_<name>` database; call before `django.setup()`."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("MEMORY_VAR_DIR", str(Path(tempfile.gettempdir()) / "memory-bench"))
    Path(os.environ["MEMORY_VAR_DIR"]).mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    database = f"bench_{name}"
    if os.environ.get("DATABASE_URL"):
        parts = urlsplit(os.environ["DATABASE_URL"])
        admin_url = urlunsplit(parts._replace(path="/postgres"))
        os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{database}"))
        os.environ.setdefault("SECRET_KEY", "bench-only-secret")
        import psycopg

        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{database}"')
    else:
        path = Path(os.environ["MEMORY_VAR_DIR"]) / f"{database}.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        os.environ["SQLITE_PATH"] = str(path)
