"""The MCP server runs against a live test server over HTTP, driven by the mcp SDK's own client."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from memory_client import MemoryClient
from tests.factories import WorkspaceFactory, make_api_key

CLIENT_NAME = "pytest-agent"


@asynccontextmanager
async def mcp_session(base_url: str, key: str, *, client_name: str = CLIENT_NAME):
    """An initialized `ClientSession` on `/mcp` with `key` as its Bearer token."""
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(f"{base_url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write, client_info=Implementation(name=client_name, version="1.0")) as session,
    ):
        await session.initialize()
        yield session


def run(fn: Callable[[], Awaitable[Any]]) -> Any:
    """Run an async block from a sync test, so the test itself may use the ORM."""
    return asyncio.run(fn())


class Tenant:
    """A workspace with a read-write key, a read-only key, and a REST client."""

    def __init__(self, base_url: str, name: str):
        self.workspace = WorkspaceFactory(name=name)
        self.key = make_api_key(self.workspace)
        self.read_only_key = make_api_key(self.workspace, read_only=True, name="ro")
        self.base_url = base_url
        self.rest = MemoryClient(base_url, self.key, max_retries=2)

    def session(self, *, read_only: bool = False, client_name: str = CLIENT_NAME):
        return mcp_session(self.base_url, self.read_only_key if read_only else self.key, client_name=client_name)


@pytest.fixture
def tenant(live_server, transactional_db):
    tenant = Tenant(live_server.url, "Acme")
    yield tenant
    tenant.rest.close()


@pytest.fixture
def other_tenant(live_server, transactional_db):
    tenant = Tenant(live_server.url, "Other")
    yield tenant
    tenant.rest.close()
