"""The client's memory API against the live server: items (CRUD, filters,
offset pagination, stats, batches, versions, restore), edges, jobs, scopes,
context assembly, conversation resources and store tools, plus which calls
the client retries by itself."""

from __future__ import annotations

import json

import httpx
import pytest

from conversations.models import MAX_MESSAGES_PER_CONVERSATION, Conversation
from memory_client import (
    MemoryConflictError,
    MemoryNotFoundError,
    MemoryPermissionError,
    MemoryQuotaExceededError,
    MemoryValidationError,
)
from memory_client import _operations as ops
from memory_client._transport import Call, RetryPolicy, run_sync

BRANCH = json.dumps(["c1", "main"], separators=(",", ":"))


def _fact(client, content: str, **fields):
    return client.create_memory(scope="global", type="fact", content=content, **fields)


def test_items_crud_filters_and_offset_pagination(client):
    items = [_fact(client, f"fact {i}", importance=i / 10) for i in range(5)]
    assert all(item["id"] and item["version"] == 1 and item["scope"] == "global" for item in items)
    chat = client.create_memory(scope="chat", scope_id="c1", type="open_loop", content="ask about Rome")

    page = client.list_memories(scope="global", limit=2, sort_by="created_at", sort_order="asc")
    assert [m["id"] for m in page.data] == [items[0]["id"], items[1]["id"]]
    assert page.meta == {"total": 5, "limit": 2, "offset": 0, "has_more": True, "total_exact": True} and page.total == 5 and page.next_offset == 2
    last = client.list_memories(scope="global", limit=2, offset=4, sort_by="created_at", sort_order="asc")
    assert [m["id"] for m in last.data] == [items[4]["id"]] and last.next_offset is None
    walked = list(client.iter_memories(page_size=2, scope="global", sort_by="created_at", sort_order="asc"))
    assert [m["id"] for m in walked] == [item["id"] for item in items]
    assert [m["id"] for m in client.iter_memories(page_size=3, offset=4, scope="global",
                                                   sort_by="created_at", sort_order="asc")] == [items[4]["id"]]
    assert {m["id"] for m in client.iter_memories(scope="global", importance_min=0.3)} == {items[3]["id"], items[4]["id"]}
    assert [m["id"] for m in client.list_memories(type="open_loop").data] == [chat["id"]]
    assert client.list_memories(scope_id="nobody").data == []

    labelled = _fact(client, "fact from the crm", metadata={"source": "crm", "rank": 2})
    assert labelled["metadata"] == {"source": "crm", "rank": 2}
    assert [m["id"] for m in client.list_memories(metadata={"source": "crm"}).data] == [labelled["id"]]
    assert client.update_memory(memory_id=labelled["id"], metadata={"source": "erp"})["metadata"] == {"source": "erp"}
    assert client.list_memories(metadata={"source": "crm"}).data == []
    client.delete_memory(memory_id=labelled["id"])

    stats = client.memory_stats()
    assert stats["total"] == 6 and stats["by_type"]["fact"] == 5 and stats["by_type"]["open_loop"] == 1
    assert client.memory_stats(scope="chat")["total"] == 1

    got = client.get_memory(memory_id=items[0]["id"])
    assert got["content"] == "fact 0" and got["sources"] == [] and got["source_memory_ids"] == []
    cited = client.create_memory(scope="global", type="fact", content="cited", sources=["msg_a", "msg_b", "msg_a"])
    assert client.get_memory(memory_id=cited["id"])["sources"] == ["msg_a", "msg_b"]
    client.delete_memory(memory_id=cited["id"])
    updated = client.update_memory(memory_id=got["id"], content="fact zero", expected_version=1)
    assert updated["content"] == "fact zero" and updated["version"] == 2
    with pytest.raises(MemoryConflictError) as stale:
        client.update_memory(memory_id=got["id"], content="lost", expected_version=1)
    assert stale.value.error_type == "memory_precondition_failed"
    with pytest.raises(MemoryValidationError):
        client.update_memory(memory_id=got["id"], importance=7)
    with pytest.raises(MemoryValidationError):
        client.update_memory(memory_id=got["id"], colour="blue")
    with pytest.raises(MemoryValidationError):
        client.create_memory(scope="planet", type="fact", content="x")
    with pytest.raises(MemoryValidationError):
        client.list_memories(limit=1000)
    with pytest.raises(MemoryNotFoundError):
        client.get_memory(memory_id="mem_missing")
    assert client.get_memory(memory_id=got["id"])["content"] == "fact zero"

    assert client.delete_memory(memory_id=chat["id"]) == {"id": chat["id"], "deleted": True}
    with pytest.raises(MemoryNotFoundError):
        client.delete_memory(memory_id=chat["id"])


def test_versions_restore_redact(client):
    item = _fact(client, "v1 text")
    client.update_memory(memory_id=item["id"], content="v2 text")
    versions = client.list_memory_versions(memory_id=item["id"])
    assert versions.total == 2 and {v["operation"] for v in versions.data} == {"created", "modified"}
    first = next(v for v in versions.data if v["version"] == 1)
    assert client.get_memory_version(memory_id=item["id"], version_id=first["id"])["content"] == "v1 text"
    assert [v["version"] for v in client.iter_memory_versions(memory_id=item["id"], page_size=1)] \
        == [v["version"] for v in versions.data]

    restored = client.restore_memory(memory_id=item["id"], version_id=first["id"])
    assert restored["content"] == "v1 text" and restored["version"] == 3
    assert client.list_memory_versions(memory_id=item["id"]).total == 3

    redacted = client.redact_memory_version(memory_id=item["id"], version_id=first["id"])
    assert redacted["redacted"] is True and redacted["content"] is None
    with pytest.raises(MemoryConflictError):
        client.restore_memory(memory_id=item["id"], version_id=first["id"])
    with pytest.raises(MemoryNotFoundError):
        client.restore_memory(memory_id=item["id"], version_id="ver_missing")
    with pytest.raises(MemoryValidationError):
        client._run(Call("POST", f"memories/{item['id']}/restore", json={}))

    # A deleted memory comes back with its id from a version written before.
    second = next(v for v in versions.data if v["version"] == 2)
    client.delete_memory(memory_id=item["id"])
    back = client.restore_memory(memory_id=item["id"], version_id=second["id"])
    assert back["id"] == item["id"] and back["content"] == "v2 text"


def test_batch_status_and_delete(client):
    a, b, c = (_fact(client, f"batch {i}") for i in range(3))
    result = client.batch_update_memory_status(ids=[a["id"], b["id"], "mem_missing"], status="deprecated")
    assert [(r["id"], r["result"]) for r in result["results"]] == [
        (a["id"], "updated"), (b["id"], "updated"), ("mem_missing", "not_found")]
    assert result["meta"]["not_found"] == 1
    again = client.batch_update_memory_status(ids=[a["id"]], status="deprecated")
    assert again["results"] == [{"id": a["id"], "result": "updated", "changed": False}]
    assert {m["id"] for m in client.iter_memories(status="deprecated")} == {a["id"], b["id"]}
    with pytest.raises(MemoryValidationError):
        client.batch_update_memory_status(ids=[], status="deprecated")
    with pytest.raises(MemoryValidationError):
        client.batch_update_memory_status(ids=[a["id"]], status="gone")

    deleted = client.batch_delete_memories(ids=[a["id"], c["id"], "mem_missing"])
    assert [r["result"] for r in deleted["results"]] == ["deleted", "deleted", "not_found"]
    assert [m["id"] for m in client.iter_memories()] == [b["id"]]
    with pytest.raises(MemoryValidationError):
        client.batch_delete_memories(ids=[b["id"], b["id"]])


def test_edges(client):
    a, b, c = (_fact(client, f"edge end {i}") for i in range(3))
    edge = client.create_edge(from_id=a["id"], to_id=b["id"], relation="supports")
    assert edge["from_id"] == a["id"] and edge["to_id"] == b["id"] and edge["relation"] == "supports"
    other = client.create_edge(from_id=c["id"], to_id=b["id"], relation="contradicts")
    assert client.get_edge(edge_id=edge["id"])["id"] == edge["id"]
    assert [e["id"] for e in client.list_edges(from_id=a["id"]).data] == [edge["id"]]
    assert [e["id"] for e in client.list_edges(relation="contradicts").data] == [other["id"]]
    assert {e["id"] for e in client.iter_edges(page_size=1, to_id=b["id"])} == {edge["id"], other["id"]}
    assert client.list_edges(to_id=b["id"], limit=1).total == 2

    with pytest.raises(MemoryConflictError) as duplicate:
        client.create_edge(from_id=a["id"], to_id=b["id"], relation="supports")
    assert duplicate.value.error_type == "memory_edge_conflict"
    with pytest.raises(MemoryValidationError):
        client.create_edge(from_id=a["id"], to_id=a["id"], relation="supports")
    with pytest.raises(MemoryNotFoundError):
        client.create_edge(from_id=a["id"], to_id="mem_missing", relation="supports")
    assert client.update_edge(edge_id=edge["id"], relation="updates")["relation"] == "updates"
    with pytest.raises(MemoryValidationError):
        client.update_edge(edge_id=edge["id"], relation="likes")
    assert client.delete_edge(edge_id=edge["id"]) == {"id": edge["id"], "deleted": True}
    with pytest.raises(MemoryNotFoundError):
        client.get_edge(edge_id=edge["id"])


def test_jobs_and_scopes(client):
    client.append_message(conversation_id="c1", role="user", content="I live in Lisbon.")
    states = client.list_scopes(scope="branch")
    assert [(s["scope"], s["scope_id"]) for s in states.data] == [("branch", BRANCH)] and states.total == 1
    assert states.data[0]["pending_floors"] == 1 and states.data[0]["dirty"] is True
    assert [s["scope_id"] for s in client.iter_scopes(dirty=True)] == [BRANCH]

    job = client.rebuild_scope(scope="branch", scope_id=BRANCH)
    assert job["kind"] == "rebuild" and job["status"] == "pending" and job["scope_id"] == BRANCH
    assert client.rebuild_scope(scope="branch", scope_id=BRANCH)["id"] == job["id"]  # one pending per scope
    assert client.get_job(job_id=job["id"])["status"] == "pending"
    assert [j["id"] for j in client.list_jobs(kind="rebuild").data] == [job["id"]]

    cancelled = client.cancel_job(job_id=job["id"])
    assert cancelled["status"] == "cancelled" and cancelled["cancel_requested"] is True
    with pytest.raises(MemoryConflictError):
        client.cancel_job(job_id=job["id"])
    assert client.list_jobs(status="cancelled").total == 1
    retried = client.retry_job(job_id=job["id"])
    assert retried["status"] == "pending" and retried["attempts"] == 0
    with pytest.raises(MemoryConflictError):
        client.retry_job(job_id=job["id"])
    with pytest.raises(MemoryNotFoundError):
        client.get_job(job_id="job_missing")

    with pytest.raises(MemoryNotFoundError):
        client.compact_scope(scope="global")  # nothing in it yet
    _fact(client, "a global fact")
    compact = client.compact_scope(scope="global")
    assert compact["kind"] == "compact" and compact["scope"] == "global"
    assert client.compact_scope(scope="branch", scope_id=BRANCH)["kind"] == "compact"
    assert {j["id"] for j in client.iter_jobs(page_size=1)} == {job["id"], compact["id"],
                                                               client.list_jobs(kind="compact", scope="branch").data[0]["id"]}
    with pytest.raises(MemoryValidationError):
        client.rebuild_scope(scope="chat", scope_id="c1")
    with pytest.raises(MemoryValidationError):
        client.rebuild_scope(scope="branch", scope_id="not json")
    with pytest.raises(MemoryNotFoundError):
        client.rebuild_scope(scope="branch", scope_id=json.dumps(["nope", "main"]))
    with pytest.raises(MemoryValidationError):
        client.list_jobs(status="sleeping")


def test_context_assembly(client):
    for i, text in enumerate(["I live in Lisbon.", "Noted.", "I prefer tea.", "Got it."]):
        client.append_message(conversation_id="c1", role="user" if i % 2 == 0 else "assistant", content=text)
    memory = client.create_memory(scope="branch", scope_id=BRANCH, type="fact", content="User lives in Lisbon.",
                                  importance=0.9)
    data = client.get_context(conversation_id="c1", max_messages=2, query="Lisbon", system="Be brief.",
                              temporary_messages=[{"role": "user", "content": "Where do I live?"}])
    assert data["conversation_id"] == "c1" and data["branch"] == "main"
    assert [m["content"] for m in data["messages"][-3:]] == ["I prefer tea.", "Got it.", "Where do I live?"]
    assert data["messages"][0]["role"] == "system" and data["messages"][0]["content"].startswith("Be brief.")
    assert memory["id"] in [m["id"] for m in data["memory"]["injected"]]
    anthropic = client.get_context(conversation_id="c1", format="anthropic", include_memories=False, max_messages=1)
    assert anthropic["messages"] == [{"role": "assistant", "content": "Got it."}]
    with pytest.raises(MemoryValidationError):
        client.get_context(conversation_id="c1", strategy="psychic")
    with pytest.raises(MemoryNotFoundError):
        client.get_context(conversation_id="nope")


def test_resources(client):
    notes = client.create_store(name="Notes", description="Team notes")
    facts = client.create_store(name="Facts")
    attached = client.set_resources(conversation_id="c-res", memory_store_ids=[notes["id"]])
    assert attached["conversation_id"] == "c-res"
    assert [(r["memory_store_id"], r["access"], r["name"]) for r in attached["resources"]] == [
        (notes["id"], "read_write", "Notes")]
    replaced = client.set_resources(conversation_id="c-res", resources=[
        {"type": "memory_store", "memory_store_id": facts["id"], "access": "read_only", "instructions": "Cite it."}])
    assert [(r["memory_store_id"], r["access"], r["instructions"]) for r in replaced["resources"]] == [
        (facts["id"], "read_only", "Cite it.")]
    assert client.get_resources(conversation_id="c-res") == replaced
    assert client.set_resources(conversation_id="c-res", resources=[])["resources"] == []
    with pytest.raises(MemoryNotFoundError):
        client.get_resources(conversation_id="never")
    with pytest.raises((MemoryNotFoundError, MemoryValidationError)):
        client.set_resources(conversation_id="c-res", memory_store_ids=["memstore_missing"])
    with pytest.raises(MemoryValidationError):
        client.set_resources(conversation_id="c-res", resources=[{"type": "memory_store", "memory_store_id": notes["id"],
                                                                  "access": "everything"}])
    assert client.get_resources(conversation_id="c-res")["resources"] == []


def test_store_tools(client):
    store = client.create_store(name="Agent Notes")
    tools = client.list_store_tools(store_id=store["id"])
    assert tools["format"] == "anthropic" and tools["memory_store_id"] == store["id"]
    names = [t["name"] for t in tools["data"]]
    assert {"memory_write", "memory_read", "memory_list"} <= set(names)
    openai = client.list_store_tools(store_id=store["id"], format="openai")
    assert [t["function"]["name"] for t in openai["data"]] == names
    with pytest.raises(MemoryValidationError):
        client.list_store_tools(store_id=store["id"], format="xml")

    written = client.call_store_tool(store_id=store["id"], name="memory_write",
                                     input={"path": "/prefs.md", "content": "Use tabs.\n"})
    assert written["type"] == "tool_result" and written["is_error"] is False, written
    read = client.call_store_tool(store_id=store["id"], name="memory_read", input={"path": "/prefs.md"})
    assert read["output"]["content"] == "Use tabs.\n"
    assert [m["path"] for m in client.list_store_memories(store_id=store["id"]).data] == ["/prefs.md"]
    missing = client.call_store_tool(store_id=store["id"], name="memory_read", input={"path": "/nope.md"})
    assert missing["is_error"] is True and missing["error"]["type"] == "not_found_error"
    listing = client.call_store_tool(store_id=store["id"], name="memory_list")
    assert [e["path"] for e in listing["output"]["entries"]] == ["/prefs.md"]
    with pytest.raises(MemoryNotFoundError):
        client.call_store_tool(store_id=store["id"], name="memory_teleport", input={})

    # Through a conversation the store is attached to read-only: reads only.
    client.set_resources(conversation_id="c-tools", resources=[
        {"type": "memory_store", "memory_store_id": store["id"], "access": "read_only"}])
    read_only = client.list_store_tools(store_id=store["id"], conversation_id="c-tools")
    assert "memory_write" not in [t["name"] for t in read_only["data"]]
    assert client.call_store_tool(store_id=store["id"], name="memory_read", input={"path": "/prefs.md"},
                                  conversation_id="c-tools")["is_error"] is False
    with pytest.raises(MemoryPermissionError):
        client.call_store_tool(store_id=store["id"], name="memory_write", conversation_id="c-tools",
                               input={"path": "/x.md", "content": "x"})
    client.append_message(conversation_id="c-unattached", role="user", content="hi")
    with pytest.raises(MemoryPermissionError):
        client.call_store_tool(store_id=store["id"], name="memory_read", input={"path": "/prefs.md"},
                               conversation_id="c-unattached")
    with pytest.raises(MemoryNotFoundError):
        client.list_store_tools(store_id=store["id"], conversation_id="c-never")


def test_quota_error_is_typed_and_not_retried(client):
    client.append_message(conversation_id="c-full", role="user", content="first")
    Conversation.objects.filter(external_id="c-full").update(message_count=MAX_MESSAGES_PER_CONVERSATION)
    with pytest.raises(MemoryQuotaExceededError) as full:
        client.append_message(conversation_id="c-full", role="user", content="one too many")
    assert full.value.status_code == 429 and full.value.error_type == "quota_exceeded_error"


async def test_async_memory_api(aclient):
    created = [await aclient.create_memory(scope="global", type="fact", content=f"async {i}") for i in range(3)]
    assert [m["id"] async for m in aclient.iter_memories(page_size=2, sort_order="asc")] == [m["id"] for m in created]
    edge = await aclient.create_edge(from_id=created[0]["id"], to_id=created[1]["id"], relation="supports")
    assert (await aclient.list_edges(from_id=created[0]["id"])).data == [edge]
    store = await aclient.create_store(name="Async Notes")
    result = await aclient.call_store_tool(store_id=store["id"], name="memory_write",
                                           input={"path": "/a.md", "content": "A"})
    assert result["is_error"] is False
    assert (await aclient.list_store_tools(store_id=store["id"], format="openai_responses"))["data"]
    await aclient.append_message(conversation_id="ac", role="user", content="hello")
    assert (await aclient.get_context(conversation_id="ac"))["messages"][-1]["content"] == "hello"
    with pytest.raises(MemoryNotFoundError):
        await aclient.get_job(job_id="job_missing")


# --- What the client retries by itself ------------------------------------------


def _attempts(call: Call, status: int = 503, error_type: str = "overloaded_error") -> int:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.method)
        return httpx.Response(status, json={"type": "error", "error": {"type": error_type, "message": "x"}})

    http = httpx.Client(transport=httpx.MockTransport(handler), base_url="http://t/v1/")
    with pytest.raises(Exception):
        run_sync(http, call, RetryPolicy(max_retries=2, backoff=0))
    return len(seen)


def test_only_repeatable_calls_are_retried():
    repeatable = [
        ops.update_memory(memory_id="m", content="x"),
        ops.batch_update_memory_status(ids=["m"], status="deprecated"),
        ops.batch_delete_memories(ids=["m"]),
        ops.update_edge(edge_id="e", relation="supports"),
        ops.cancel_job(job_id="j"),
        ops.redact_memory_version(memory_id="m", version_id="v"),
        ops.get_context(conversation_id="c"),
        ops.set_resources(conversation_id="c", memory_store_ids=[]),
        ops.list_memories(),
        ops.delete_edge(edge_id="e"),
    ]
    once = [
        ops.create_memory(scope="global", type="fact", content="x"),
        ops.create_edge(from_id="a", to_id="b", relation="supports"),
        ops.restore_memory(memory_id="m", version_id="v"),
        ops.retry_job(job_id="j"),
        ops.rebuild_scope(scope="branch", scope_id=BRANCH),
        ops.compact_scope(scope="global"),
        ops.call_store_tool(store_id="s", name="memory_write", input={}),
    ]
    assert [_attempts(call) for call in repeatable] == [3] * len(repeatable)
    assert [_attempts(call) for call in once] == [1] * len(once)
    # A rate limit is retried even for a POST (nothing was done); a quota is not.
    assert _attempts(ops.restore_memory(memory_id="m", version_id="v"), 429, "rate_limit_error") == 3
    assert _attempts(ops.append_message(conversation_id="c", role="user", content="x"), 429,
                     "quota_exceeded_error") == 1


def test_tool_call_body_and_pages_offsets():
    call = ops.call_store_tool(store_id="s", name="memory_read", input={"path": "/a"}, conversation_id="c")
    assert call.json == {"input": {"path": "/a"}, "conversation_id": "c"}
    assert ops.call_store_tool(store_id="s", name="memory_list").json == {"input": {}}
    assert ops.list_store_tools(store_id="s", format="openai").query() == {"format": "openai"}


def test_user_filters_search_and_forgetting_a_user(client):
    seat = client.create_memory(scope="user", scope_id="u-ana", type="fact", content="Ana prefers window seats")
    client.create_memory(scope="user", scope_id="u-ana", type="fact", content="Ana drinks green tea")
    client.create_memory(scope="user", scope_id="u-ben", type="fact", content="Ben prefers aisle seats")
    assert client.list_memories(user_id="u-ana").total == 2
    with pytest.raises(MemoryValidationError):
        client.list_memories(usr_id="u-ana")
    found = client.search_memories(query="window seat", user_id="u-ana")
    assert found.data[0]["id"] == seat["id"] and found.data[0]["score"] > 0
    assert all(row["scope_id"] == "u-ana" for row in found.data)
    gone = client.delete_user_memories(user_id="u-ana")
    assert gone["deleted"] == 2
    assert client.list_memories(user_id="u-ana").total == 0 and client.list_memories(user_id="u-ben").total == 1


def test_help_shows_what_a_method_takes_and_not_the_request_it_builds():
    import inspect

    from memory_client import MemoryClient

    signature = inspect.signature(MemoryClient.search_memories)
    assert list(signature.parameters)[:3] == ["self", "query", "user_id"]
    assert "Call" not in str(signature) and "Call" not in str(inspect.signature(MemoryClient.list_memories))
