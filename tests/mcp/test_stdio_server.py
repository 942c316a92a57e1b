"""`python -m memory_client.mcp`, launched as a local client launches it
(`stdio_client`), against a live server: the same tools as `/mcp`, run through
the REST API."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types import Implementation

from memories.models import MemoryItem, MemoryVersion
from tests.mcp.conftest import run

pytestmark = pytest.mark.slow  # starts processes of its own

REPO = Path(__file__).resolve().parents[2]


def _params(base_url: str, key: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_client.mcp", "--base-url", base_url, "--api-key", key],
        cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


async def _with_stdio(base_url: str, key: str, body, *, client_name: str = "desktop-app"):
    async with (
        stdio_client(_params(base_url, key)) as (read, write),
        ClientSession(read, write, client_info=Implementation(name=client_name, version="2")) as session,
    ):
        await session.initialize()
        return await body(session)


def _text(result) -> str:
    return "\n".join(block.text for block in result.content)


def test_stdio_server_offers_the_http_tools_and_runs_them(live_server, tenant):
    from tests.mcp.conftest import mcp_session

    notes = tenant.rest.create_store(name="notes")
    tenant.rest.write_store_memory(store_id=notes["id"], path="/todo.md", content="buy milk")

    async def over_http():
        async with mcp_session(live_server.url, tenant.key) as session:
            return await session.list_tools()

    async def over_stdio(session):
        out = {"tools": await session.list_tools()}
        out["remember"] = await session.call_tool("remember", {"content": "Lives in Porto", "fact_key": "home city", "user_id": "ana"})
        out["replace"] = await session.call_tool("remember", {"content": "Lives in Lisbon", "fact_key": "home city", "user_id": "ana"})
        out["recall"] = await session.call_tool("recall", {"query": "where does ana live", "user_id": "ana"})
        out["list"] = await session.call_tool("list_memories", {"user_id": "ana", "status": "deprecated"})
        out["read"] = await session.call_tool("memory_read", {"path": "/todo.md"})
        out["edit"] = await session.call_tool("memory_edit", {"path": "/todo.md", "old_str": "milk", "new_str": "oat milk"})
        out["bad"] = await session.call_tool("forget", {"memory_id": 3})
        out["resources"] = await session.list_resources()
        out["resource"] = await session.read_resource(out["resources"].resources[0].uri)
        return out

    http_tools = run(over_http)
    out = run(lambda: _with_stdio(live_server.url, tenant.key, over_stdio))

    def shape(listing):
        return sorted((t.name, t.description, repr(t.input_schema), t.annotations.read_only_hint) for t in listing.tools)

    assert shape(out["tools"]) == shape(http_tools)
    for name in ("remember", "replace", "recall", "list", "read", "edit"):
        assert not out[name].is_error, (name, _text(out[name]))
    porto = out["remember"].structured_content["memory"]["id"]
    assert out["replace"].structured_content["deprecated_ids"] == [porto]
    assert "Lives in Lisbon" in _text(out["recall"]) and "Porto" not in _text(out["recall"])
    assert [m["id"] for m in out["list"].structured_content["data"]] == [porto]
    assert "buy milk" in _text(out["read"])
    assert out["bad"].is_error and _text(out["bad"]) == "input.memory_id must be of type string."
    assert [str(r.uri) for r in out["resources"].resources] == [f"memory://stores/{notes['id']}/todo.md"]
    assert out["resource"].contents[0].text == "buy oat milk"
    # Writes through the stdio server record the key and the local client's name.
    lisbon = out["replace"].structured_content["memory"]["id"]
    assert MemoryVersion.objects.get(memory_id=lisbon).actor_session_id == "mcp:desktop-app"
    assert MemoryItem.objects.get(pk=porto).status == "deprecated"


def test_stdio_server_with_a_read_only_key(live_server, tenant):
    async def body(session):
        tools = await session.list_tools()
        denied = await session.call_tool("remember", {"content": "x"})
        return tools, denied

    tools, denied = run(lambda: _with_stdio(live_server.url, tenant.read_only_key, body))
    assert {t.name for t in tools.tools} == {"memory_list", "memory_search", "memory_read", "recall", "list_memories"}
    assert denied.is_error and "read-only" in _text(denied)
    assert not MemoryItem.objects.filter(workspace=tenant.workspace).exists()


def test_stdio_server_refuses_to_start_without_a_key(monkeypatch):
    from memory_client.mcp import main

    monkeypatch.delenv("MEMORY_BASE_URL", raising=False)
    monkeypatch.delenv("MEMORY_API_KEY", raising=False)
    assert main(["--base-url", "http://127.0.0.1:9"]) == 2
