"""`/v1/agent_tools`: the MCP server's tools over the REST API."""

from __future__ import annotations

import pytest

from memories.models import MemoryVersion

pytestmark = pytest.mark.django_db


def test_list_by_key(api, readonly_api):
    tools = api.get("/v1/agent_tools").json()["data"]
    assert {t["name"] for t in tools} == {
        "memory_list", "memory_search", "memory_read", "memory_write", "memory_edit", "memory_delete",
        "recall", "remember", "forget", "list_memories",
    }
    remember = next(t for t in tools if t["name"] == "remember")
    assert remember["read_only"] is False and remember["input_schema"]["required"] == ["content"]
    read_only = readonly_api.get("/v1/agent_tools").json()["data"]
    assert all(t["read_only"] for t in read_only) and len(read_only) == 5


def test_execute_records_the_client(api):
    response = api.post("/v1/agent_tools/remember", {"input": {"content": "Likes jazz"}, "client_name": "cli"},
                        format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["type"] == "tool_result" and body["is_error"] is False and body["tool_name"] == "remember"
    memory_id = body["output"]["memory"]["id"]
    version = MemoryVersion.objects.get(memory_id=memory_id)
    assert (version.actor_type, version.actor_session_id) == ("session", "mcp:cli")
    plain = api.post("/v1/agent_tools/remember", {"input": {"content": "Likes blues"}}, format="json").json()
    version = MemoryVersion.objects.get(memory_id=plain["output"]["memory"]["id"])
    assert (version.actor_type, version.actor_session_id) == ("api_key", None)


def test_remember_keeps_metadata_and_list_filters_on_it(api):
    def call(tool: str, data: dict) -> dict:
        return api.post(f"/v1/agent_tools/{tool}", {"input": data}, format="json").json()

    crm = call("remember", {"content": "Prefers email", "user_id": "u1", "metadata": {"source": "crm", "rank": 2}})
    assert crm["is_error"] is False and crm["output"]["memory"]["metadata"] == {"source": "crm", "rank": 2}
    call("remember", {"content": "Prefers calls", "user_id": "u1", "metadata": {"source": "chat"}})
    found = call("list_memories", {"user_id": "u1", "metadata": {"source": "crm"}})
    assert [m["id"] for m in found["output"]["data"]] == [crm["output"]["memory"]["id"]]
    bad = call("remember", {"content": "x", "metadata": {"k" * 129: 1}})
    assert bad["is_error"] is True and "metadata" in bad["content"]
    not_scalar = call("list_memories", {"metadata": {"source": ["crm"]}})
    assert not_scalar["is_error"] is True and "metadata" in not_scalar["content"]


def test_errors(api, readonly_api):
    bad_input = api.post("/v1/agent_tools/recall", {"input": {"query": ""}}, format="json")
    assert bad_input.status_code == 200 and bad_input.json()["is_error"] is True
    assert bad_input.json()["content"] == "input.query must not be empty."
    assert bad_input.json()["error"]["type"] == "invalid_request_error"
    unknown = api.post("/v1/agent_tools/summon", {"input": {}}, format="json")
    assert unknown.status_code == 404 and unknown.json()["error"]["type"] == "not_found_error"
    denied = readonly_api.post("/v1/agent_tools/remember", {"input": {"content": "x"}}, format="json")
    assert denied.status_code == 403 and "read-only" in denied.json()["error"]["message"]
    allowed = readonly_api.post("/v1/agent_tools/list_memories", {"input": {}}, format="json")
    assert allowed.status_code == 200 and allowed.json()["output"]["meta"]["total"] == 0
    misspelt = api.post("/v1/agent_tools/recall", {"inputs": {"query": "x"}}, format="json")
    assert misspelt.status_code == 400
    not_object = api.post("/v1/agent_tools/recall", {"input": ["x"]}, format="json")
    assert not_object.status_code == 200 and not_object.json()["content"] == "The tool input must be an object."


def _mcp(client, method: str, params: dict | None = None):
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return client.post("/mcp", message, format="json", HTTP_ACCEPT="application/json, text/event-stream")


def test_mcp_statement_counts(api, django_assert_max_num_queries):
    """The MCP layer adds no query of its own: at most the key's lookup, then
    only what the tool itself reads or writes."""
    _mcp(api, "ping")  # stamps the key's last_used_at once
    with django_assert_max_num_queries(1):
        assert _mcp(api, "tools/list").status_code == 200
    with django_assert_max_num_queries(3):  # key, count, page
        body = _mcp(api, "tools/call", {"name": "list_memories", "arguments": {}}).json()
    assert body["result"]["isError"] is False


def test_recall_honours_max_tokens_on_the_text_the_model_reads(api, workspace):
    from memories.llm.tokens import count_tokens
    from memories.services.items import memory_item_create
    from tests.memories.helpers_items import AGENT

    for i in range(30):
        memory_item_create(workspace=workspace, actor=AGENT, scope="user", scope_id="u-ana", type="fact",
                           content=f"Ana's seat preference note {i}: window seats on long flights, aisle on short",
                           fact_key=f"user.note.{i}")
    for budget in (60, 25, 200):
        body = api.post("/v1/agent_tools/recall", {"input": {"query": "seat preference", "user_id": "u-ana",
                                                             "max_tokens": budget}}, format="json").json()
        text = body["content"] if isinstance(body["content"], str) else "".join(
            block["text"] for block in body["content"] if block["type"] == "text")
        assert count_tokens(text) <= budget, (budget, count_tokens(text))
        assert body["output"]["tokens_used"] == count_tokens(text)
        assert body["output"]["tokenizer"] == "o200k_base"
        assert len(body["output"]["memories"]) + body["output"]["omitted_count"] >= 1
