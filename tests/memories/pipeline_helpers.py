"""Helpers for the pipeline tests: eager Celery, the conversation fixtures."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from memory_project.celery import app as celery_app

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "conversations"


def load_fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


@contextlib.contextmanager
def eager_celery():
    """Tasks run in-process when dispatched (after commit)."""
    old = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = old
