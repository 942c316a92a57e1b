from __future__ import annotations

import pytest
from django.db import connection
from rest_framework.test import APIClient

from tests.factories import MemoryItemFactory, WorkspaceFactory, make_api_key

# What makes a test `slow` without its saying so: a real Celery worker, a
# browser, or a live server thread. Tests that start processes of their own
# (gunicorn, a subprocess) carry the marker themselves.
SLOW_MARKERS = ("celery_worker", "browser")
SLOW_FIXTURES = ("live_server",)


def pytest_collection_modifyitems(config, items):
    """Mark server and worker tests `slow` (`make test-quick` leaves them
    out); skip PostgreSQL-only tests on the embedded (SQLite) run."""
    from django.conf import settings

    for item in items:
        if any(name in item.keywords for name in SLOW_MARKERS) or \
                any(name in getattr(item, "fixturenames", ()) for name in SLOW_FIXTURES):
            item.add_marker(pytest.mark.slow)
    engine = settings.DATABASES["default"]["ENGINE"]
    if "postgresql" in engine:
        return
    skip_pg = pytest.mark.skip(reason="needs PostgreSQL (run with DATABASE_URL)")
    for item in items:
        if "postgres" in item.keywords or "celery_worker" in item.keywords:
            item.add_marker(skip_pg)


@pytest.fixture(scope="session", autouse=True)
def _embeddings_off_by_default():
    """The offline embedding model costs ~30 ms of CPU per text: the suite's
    many pipeline runs go without vectors (BM25 ranking), and the tests of
    dense recall turn the real model on where they need it. The environment
    variable reaches Celery worker subprocesses too."""
    import os

    from django.conf import settings

    previous = settings.EMBEDDING_PROVIDER
    os.environ["EMBEDDING_PROVIDER"] = "none"
    settings.EMBEDDING_PROVIDER = "none"
    yield
    settings.EMBEDDING_PROVIDER = previous


@pytest.fixture(autouse=True)
def no_auth_failure_limit(request, monkeypatch):
    """Every test client speaks from 127.0.0.1, so the per-address limit on
    failed authentications would count the whole suite's 401 checks together.
    It is off except where a test sets its own rate (tests/accounts/test_throttling.py)."""
    from accounts.throttling import AuthFailureThrottle

    monkeypatch.setattr(AuthFailureThrottle, "THROTTLE_RATES", {**AuthFailureThrottle.THROTTLE_RATES, "auth_failure": None})


@pytest.fixture
def is_postgres() -> bool:
    return connection.vendor == "postgresql"


@pytest.fixture
def workspace(db):
    return WorkspaceFactory(name="Acme", slug="acme")


@pytest.fixture
def other_workspace(db):
    return WorkspaceFactory(name="Other", slug="other")


def _client_for(raw_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    return client


@pytest.fixture
def api_key(workspace) -> str:
    return make_api_key(workspace)


@pytest.fixture
def api(api_key) -> APIClient:
    """A client authenticated to `workspace`."""
    return _client_for(api_key)


@pytest.fixture
def other_api(other_workspace) -> APIClient:
    """A client authenticated to `other_workspace`."""
    return _client_for(make_api_key(other_workspace))


@pytest.fixture
def readonly_api(workspace) -> APIClient:
    return _client_for(make_api_key(workspace, read_only=True, name="ro"))


@pytest.fixture
def anon_api() -> APIClient:
    return APIClient()


@pytest.fixture
def make_memory(workspace):
    """A memory of `workspace` (or `ws`) through its service (`MemoryItemFactory`):
    a global fact unless the fields say otherwise."""

    def make(content: str = "The user prefers green tea.", *, ws=None, **fields):
        return MemoryItemFactory(workspace=ws or workspace, content=content, **fields)

    return make
