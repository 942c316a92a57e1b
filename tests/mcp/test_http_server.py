"""`/mcp` of a live server, driven by the mcp SDK's own client
(`streamable_http_client` + `ClientSession`)."""

from __future__ import annotations

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import PaginatedRequestParams

from conversations.models import Conversation
from memories.models import MemoryEdge, MemoryItem, MemoryVersion
from tests.mcp.conftest import CLIENT_NAME, run

READ_TOOLS = {"memory_list", "memory_search", "memory_read", "recall", "list_memories"}
WRITE_TOOLS = {"memory_write", "memory_edit", "memory_delete", "remember", "forget"}


def _text(result) -> str:
    return "\n".join(block.text for block in result.content)


def test_initialize_and_tools_by_key(tenant):
    async def go():
        async with tenant.session() as session:
            listed = await session.list_tools()
        async with tenant.session(read_only=True) as session:
            read_only = await session.list_tools()
        return listed, read_only

    listed, read_only = run(go)
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == READ_TOOLS | WRITE_TOOLS
    assert {tool.name for tool in read_only.tools} == READ_TOOLS
    recall = tools["recall"]
    assert recall.input_schema["required"] == ["query"]
    assert recall.input_schema["additionalProperties"] is False
    assert all(prop.get("description") for prop in recall.input_schema["properties"].values())
    assert recall.annotations.read_only_hint is True
    assert tools["forget"].annotations.destructive_hint is True
    assert {"store_id", "store", "path", "content"} <= set(tools["memory_write"].input_schema["properties"])


def test_initialize_names_the_server(live_server, tenant):
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def go():
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {tenant.key}"}) as http,
            streamable_http_client(f"{live_server.url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            return await session.initialize()

    init = run(go)
    assert init.server_info.name == "memory-service"
    assert "recall" in init.instructions
    assert init.capabilities.tools is not None and init.capabilities.resources is not None


def test_store_tools_write_versions_with_key_and_client(tenant):
    notes = tenant.rest.create_store(name="notes")
    tenant.rest.create_store(name="team")

    async def go():
        async with tenant.session() as s:
            out = {}
            out["write"] = await s.call_tool("memory_write", {"store": "notes", "path": "/prefs.md", "content": "likes tea\nhates coffee"})
            out["edit"] = await s.call_tool("memory_edit", {"store_id": notes["id"], "path": "/prefs.md", "old_str": "tea", "new_str": "green tea"})
            out["read"] = await s.call_tool("memory_read", {"store": "notes", "path": "/prefs.md"})
            out["search"] = await s.call_tool("memory_search", {"store": "notes", "query": "coffee"})
            out["list"] = await s.call_tool("memory_list", {"store": "notes"})
            out["write2"] = await s.call_tool("memory_write", {"store": "notes", "path": "/gone.md", "content": "x"})
            out["delete"] = await s.call_tool("memory_delete", {"store": "notes", "path": "/gone.md"})
            return out

    out = run(go)
    assert not any(result.is_error for result in out.values()), {k: _text(v) for k, v in out.items()}
    assert "green tea" in _text(out["read"]) and out["read"].structured_content["content"] == "likes green tea\nhates coffee"
    assert "/prefs.md" in _text(out["search"]) and "2: hates coffee" in _text(out["search"])
    assert "/prefs.md" in _text(out["list"]) and "/gone.md" not in _text(out["list"])
    assert out["write"].structured_content["memory_store_id"] == notes["id"]
    # The file is a store document of the API, and each write a version by the key and the client.
    listing = tenant.rest.list_store_memories(store_id=notes["id"])
    assert [m["path"] for m in listing.data] == ["/prefs.md"]
    versions = MemoryVersion.objects.filter(store_id=notes["id"]).order_by("created_at")
    assert [v.operation for v in versions] == ["created", "modified", "created", "deleted"]
    assert {(v.actor_type, v.actor_session_id) for v in versions} == {("session", f"mcp:{CLIENT_NAME}")}
    assert {v.actor_api_key_id for v in versions} == {tenant.workspace.api_keys.get(read_only=False).pk}
    api_versions = tenant.rest.list_store_memory_versions(store_id=notes["id"], session_id=f"mcp:{CLIENT_NAME}")
    assert len(api_versions.data) == 4


def test_conversation_memory_tools(tenant):
    tenant.rest.append_message(conversation_id="trip", role="user", content="Book me a flight to Lisbon", user_id="maya")
    Conversation.objects.filter(workspace=tenant.workspace, external_id="trip").update(
        metadata={"summary": "Maya is planning a trip to Lisbon."}
    )

    async def go():
        async with tenant.session() as s:
            out = {}
            out["first"] = await s.call_tool("remember", {"content": "Prefers window seats", "fact_key": "Seat  Preference", "user_id": "maya"})
            out["again"] = await s.call_tool("remember", {"content": "Prefers window seats", "fact_key": "seat preference", "user_id": "maya"})
            out["second"] = await s.call_tool("remember", {"content": "Prefers aisle seats", "fact_key": "seat preference", "user_id": "maya"})
            out["global"] = await s.call_tool("remember", {"content": "The office is closed on Fridays", "importance": 0.9})
            out["other_user"] = await s.call_tool("remember", {"content": "Prefers the front row seats", "user_id": "tom"})
            out["recall_user"] = await s.call_tool("recall", {"query": "seats preference", "user_id": "maya"})
            out["recall_conv"] = await s.call_tool("recall", {"query": "seats", "conversation_id": "trip", "max_tokens": 200})
            out["list"] = await s.call_tool("list_memories", {"user_id": "maya", "status": "deprecated"})
            out["page"] = await s.call_tool("list_memories", {"limit": 2})
            out["page2"] = await s.call_tool("list_memories", {"limit": 2, "offset": 2})
            return out

    out = run(go)
    assert not any(result.is_error for result in out.values()), {k: _text(v) for k, v in out.items()}
    first_id = out["first"].structured_content["memory"]["id"]
    second = out["second"].structured_content
    assert out["again"].structured_content["operation"] == "unchanged"
    assert second["deprecated_ids"] == [first_id] and first_id in _text(out["second"])
    old = MemoryItem.objects.get(pk=first_id)
    assert (old.status, old.scope, old.scope_id, old.fact_key) == ("deprecated", "user", "maya", "seat preference")
    assert MemoryEdge.objects.filter(from_item_id=second["memory"]["id"], to_item_id=first_id, relation="updates").exists()
    assert MemoryVersion.objects.filter(memory_id=first_id, operation="modified", actor_session_id=f"mcp:{CLIENT_NAME}").exists()

    recalled = out["recall_user"].structured_content
    contents = [m["content"] for m in recalled["memories"]]
    assert "Prefers aisle seats" in contents
    assert "Prefers window seats" not in contents  # deprecated
    assert "Prefers the front row seats" not in contents  # another user's
    assert f"id {second['memory']['id']}" in _text(out["recall_user"])

    in_trip = out["recall_conv"].structured_content
    assert in_trip["summary"] == "Maya is planning a trip to Lisbon."
    assert "Maya is planning a trip to Lisbon." in _text(out["recall_conv"])
    assert in_trip["budget"] == 200 and in_trip["tokens_used"] <= 200

    listed = out["list"].structured_content
    assert [m["id"] for m in listed["data"]] == [first_id] and listed["meta"]["total"] == 1
    # Active memories: maya's aisle seats, the global one, tom's (the window seats are deprecated).
    assert out["page"].structured_content["meta"] == {"total": 3, "limit": 2, "offset": 0}
    assert "offset=2" in _text(out["page"])
    page_ids = {m["id"] for m in out["page"].structured_content["data"]} | {
        m["id"] for m in out["page2"].structured_content["data"]
    }
    assert len(page_ids) == 3


def test_forget_deprecates_or_deletes(tenant):
    async def go():
        async with tenant.session() as s:
            a = await s.call_tool("remember", {"content": "Uses vim"})
            b = await s.call_tool("remember", {"content": "Uses emacs"})
            a_id, b_id = a.structured_content["memory"]["id"], b.structured_content["memory"]["id"]
            deprecated = await s.call_tool("forget", {"memory_id": a_id})
            twice = await s.call_tool("forget", {"memory_id": a_id})
            deleted = await s.call_tool("forget", {"memory_id": b_id, "mode": "delete"})
            recall = await s.call_tool("recall", {"query": "vim emacs"})
            return a_id, b_id, deprecated, twice, deleted, recall

    a_id, b_id, deprecated, twice, deleted, recall = run(go)
    assert not deprecated.is_error and "Deprecated" in _text(deprecated)
    assert "already deprecated" in _text(twice)
    assert not deleted.is_error and not MemoryItem.objects.filter(pk=b_id).exists()
    assert MemoryItem.objects.get(pk=a_id).status == "deprecated"
    assert MemoryVersion.objects.filter(memory_id=b_id, operation="deleted", actor_session_id=f"mcp:{CLIENT_NAME}").exists()
    assert recall.structured_content["memories"] == []


def test_resources_list_and_read(tenant):
    notes = tenant.rest.create_store(name="notes")
    tenant.rest.write_store_memory(store_id=notes["id"], path="/projects/lisbon trip.md", content="# Lisbon\nhotel booked")
    tenant.rest.append_message(conversation_id="c 1", role="user", content="hello")
    Conversation.objects.filter(workspace=tenant.workspace, external_id="c 1").update(metadata={"summary": "Greetings only."})
    tenant.rest.append_message(conversation_id="c2", role="user", content="no summary yet")

    async def go():
        async with tenant.session(read_only=True) as s:
            listed = await s.list_resources()
            cursor = listed.next_cursor
            while cursor:
                page = await s.list_resources(params=PaginatedRequestParams(cursor=cursor))
                listed.resources.extend(page.resources)
                cursor = page.next_cursor
            templates = await s.list_resource_templates()
            contents = {str(r.uri): await s.read_resource(r.uri) for r in listed.resources}
            try:
                await s.read_resource(f"memory://stores/{notes['id']}/missing.md")
                missing = None
            except MCPError as exc:
                missing = exc
            return listed, templates, contents, missing

    listed, templates, contents, missing = run(go)
    uris = [str(r.uri) for r in listed.resources]
    doc_uri = f"memory://stores/{notes['id']}/projects/lisbon%20trip.md"
    assert uris == [doc_uri, "memory://conversations/c%201/summary"]
    assert contents[doc_uri].contents[0].text == "# Lisbon\nhotel booked"
    assert contents[doc_uri].contents[0].mime_type == "text/markdown"
    assert contents["memory://conversations/c%201/summary"].contents[0].text == "Greetings only."
    assert {t.uri_template for t in templates.resource_templates} == {
        "memory://stores/{store_id}/{+path}", "memory://conversations/{conversation_id}/summary"
    }
    assert missing is not None and missing.error.code == -32002


def test_bad_input_comes_back_as_tool_errors(tenant):
    tenant.rest.create_store(name="notes")
    tenant.rest.create_store(name="team")

    async def go():
        async with tenant.session() as s:
            return {
                "missing": await s.call_tool("recall", {}),
                "type": await s.call_tool("remember", {"content": 42}),
                "unknown_field": await s.call_tool("forget", {"memory_id": "mem_x", "why": "because"}),
                "enum": await s.call_tool("forget", {"memory_id": "mem_x", "mode": "shred"}),
                "range": await s.call_tool("remember", {"content": "x", "importance": 7}),
                "no_such_memory": await s.call_tool("forget", {"memory_id": "mem_nope"}),
                "which_store": await s.call_tool("memory_list", {}),
                "no_store": await s.call_tool("memory_read", {"store": "nope", "path": "/a.md"}),
                "bad_path": await s.call_tool("memory_write", {"store": "notes", "path": "/a/../b", "content": "x"}),
                "no_conversation": await s.call_tool("recall", {"query": "x", "conversation_id": "nope"}),
                "both": await s.call_tool("recall", {"query": "x", "conversation_id": "c", "user_id": "u"}),
                "unknown_tool": await s.call_tool("summon", {}),
            }

    out = run(go)
    assert all(result.is_error for result in out.values()), {k: _text(v) for k, v in out.items() if not v.is_error}
    assert _text(out["missing"]) == "input.query is required."
    assert _text(out["type"]) == "input.content must be of type string."
    assert "Unknown input field(s): why" in _text(out["unknown_field"])
    assert "deprecate, delete" in _text(out["enum"])
    assert "between 0 and 1" in _text(out["range"])
    assert "No memory 'mem_nope'" in _text(out["no_such_memory"])
    assert "'notes'" in _text(out["which_store"]) and "'team'" in _text(out["which_store"])
    assert "No memory store named 'nope'" in _text(out["no_store"])
    assert "not found" in _text(out["no_conversation"])
    assert "not both" in _text(out["both"])
    assert "No tool 'summon'" in _text(out["unknown_tool"])
    assert not MemoryItem.objects.filter(workspace=tenant.workspace).exists()


def test_read_only_key_may_only_read(tenant):
    notes = tenant.rest.create_store(name="notes")
    tenant.rest.write_store_memory(store_id=notes["id"], path="/a.md", content="alpha")

    async def go():
        async with tenant.session(read_only=True) as s:
            write = await s.call_tool("memory_write", {"path": "/b.md", "content": "beta"})
            remember = await s.call_tool("remember", {"content": "x"})
            read = await s.call_tool("memory_read", {"path": "/a.md"})
            return write, remember, read

    write, remember, read = run(go)
    assert write.is_error and "read-only" in _text(write)
    assert remember.is_error and "read-only" in _text(remember)
    assert not read.is_error and "alpha" in _text(read)
    assert MemoryItem.objects.filter(workspace=tenant.workspace).count() == 1


def test_another_workspace_ids_are_invisible(tenant, other_tenant):
    notes = tenant.rest.create_store(name="notes")
    tenant.rest.write_store_memory(store_id=notes["id"], path="/secret.md", content="the vault code is 1234")
    tenant.rest.append_message(conversation_id="private", role="user", content="vault code 1234", user_id="maya")
    Conversation.objects.filter(workspace=tenant.workspace, external_id="private").update(metadata={"summary": "vault 1234"})
    other_tenant.rest.create_store(name="notes")

    async def remember_in_a():
        async with tenant.session() as s:
            return (await s.call_tool("remember", {"content": "vault code is 1234", "user_id": "maya"})).structured_content

    secret_id = run(remember_in_a)["memory"]["id"]

    async def go():
        async with other_tenant.session() as s:
            out = {
                "read": await s.call_tool("memory_read", {"store_id": notes["id"], "path": "/secret.md"}),
                "write": await s.call_tool("memory_write", {"store_id": notes["id"], "path": "/x.md", "content": "x"}),
                "forget": await s.call_tool("forget", {"memory_id": secret_id, "mode": "delete"}),
                "recall_conv": await s.call_tool("recall", {"query": "vault", "conversation_id": "private"}),
                "recall_user": await s.call_tool("recall", {"query": "vault code", "user_id": "maya"}),
                "list": await s.call_tool("list_memories", {"user_id": "maya"}),
                "search": await s.call_tool("memory_search", {"query": "vault"}),
            }
            resources = await s.list_resources()
            errors = []
            for uri in (f"memory://stores/{notes['id']}/secret.md", "memory://conversations/private/summary"):
                try:
                    await s.read_resource(uri)
                except MCPError as exc:
                    errors.append(exc.error.code)
            return out, resources, errors

    out, resources, errors = run(go)
    for name in ("read", "write", "forget", "recall_conv"):
        assert out[name].is_error, name
    assert "No memory store" in _text(out["read"]) and "not found" in _text(out["recall_conv"])
    for name in ("recall_user", "list", "search"):
        assert not out[name].is_error and "1234" not in _text(out[name]), name
    assert resources.resources == []
    assert errors == [-32002, -32002]
    assert MemoryItem.objects.filter(pk=secret_id).exists()
    assert not MemoryItem.objects.filter(workspace=other_tenant.workspace).exclude(scope="store").exists()


def test_http_auth_and_sessions(live_server, tenant, other_tenant):
    url = f"{live_server.url}/mcp"
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}}
    with httpx.Client(timeout=30) as http:
        anonymous = http.post(url, json=ping, headers=headers)
        assert anonymous.status_code == 401
        assert anonymous.json()["error"]["type"] == "authentication_error"
        bad_key = http.post(url, json=ping, headers={**headers, "Authorization": "Bearer nope"})
        assert bad_key.status_code == 401
        mine = {**headers, "Authorization": f"Bearer {tenant.key}"}
        opened = http.post(url, json=initialize, headers=mine)
        assert opened.status_code == 200 and opened.json()["result"]["serverInfo"]["name"] == "memory-service"
        session = opened.headers["mcp-session-id"]
        assert http.post(url, json=ping, headers={**mine, "mcp-session-id": session}).status_code == 200
        # The token is bound to the key that opened it, and cannot be forged.
        theirs = {**headers, "Authorization": f"Bearer {other_tenant.key}"}
        assert http.post(url, json=ping, headers={**theirs, "mcp-session-id": session}).status_code == 404
        assert http.post(url, json=ping, headers={**mine, "mcp-session-id": session + "x"}).status_code == 404
        assert http.get(url, headers={**mine, "Accept": "text/event-stream"}).status_code == 405
        assert http.delete(url, headers={**mine, "mcp-session-id": session}).status_code == 204
        not_json = http.post(url, content=b"{", headers=mine)
        assert not_json.status_code == 400 and not_json.json()["error"]["code"] == -32700


@pytest.mark.parametrize("name", ["Claude Desktop", ""])
def test_the_actor_names_the_client(tenant, name):
    async def go():
        async with tenant.session(client_name=name) as s:
            return await s.call_tool("remember", {"content": f"Client {name or 'unnamed'} was here"})

    result = run(go)
    version = MemoryVersion.objects.get(memory_id=result.structured_content["memory"]["id"])
    assert version.actor_session_id == (f"mcp:{name}" if name else "mcp")
