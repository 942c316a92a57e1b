"""Fixtures for code that talks to a live test server over HTTP (pytest-django's
`live_server`): the Python client and the framework adapters built on it.
Imported by the conftest of each test package that needs them."""

from __future__ import annotations

import pytest

from memory_client import AsyncMemoryClient, MemoryClient
from tests.factories import WorkspaceFactory, make_api_key


@pytest.fixture
def new_key(transactional_db):
    """A factory of API keys, each for a fresh workspace (an empty, isolated tenant)."""

    def make() -> str:
        return make_api_key(WorkspaceFactory())

    return make


@pytest.fixture
def key_pool(new_key) -> list[str]:
    """Keys made up front, for async tests (which may not touch the ORM)."""
    return [new_key() for _ in range(16)]


@pytest.fixture
def api_key(new_key) -> str:
    return new_key()


@pytest.fixture
def client(live_server, api_key):
    with MemoryClient(live_server.url, api_key, max_retries=4) as memory:
        yield memory


@pytest.fixture
async def aclient(live_server, api_key):
    async with AsyncMemoryClient(live_server.url, api_key, max_retries=4) as memory:
        yield memory
