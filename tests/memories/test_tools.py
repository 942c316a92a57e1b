"""The agent memory tools: definitions in both formats and the executor."""

from __future__ import annotations

import pytest

from memories.models import MemoryItem, MemoryVersion

pytestmark = pytest.mark.django_db

TOOL_NAMES = ["memory_list", "memory_search", "memory_read", "memory_write", "memory_edit", "memory_delete"]


@pytest.fixture
def sid(api):
    return api.post("/v1/memory_stores", {"name": "Agent Notes", "description": "What the agent learnt."}, format="json").json()["id"]


def run(api, sid, name, tool_input=None, conversation_id=None, status=200):
    body = {"input": tool_input or {}}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    response = api.post(f"/v1/memory_stores/{sid}/tools/{name}", body, format="json")
    assert response.status_code == status, response.content
    return response.json()


def test_anthropic_definitions(api, sid):
    body = api.get(f"/v1/memory_stores/{sid}/tools").json()
    assert body["format"] == "anthropic"
    tools = body["data"]
    assert [t["name"] for t in tools] == TOOL_NAMES
    for tool in tools:
        assert set(tool) == {"name", "description", "input_schema"}
        assert tool["input_schema"]["type"] == "object"
        assert "Agent Notes" in tool["description"]
    edit = next(t for t in tools if t["name"] == "memory_edit")
    assert edit["input_schema"]["required"] == ["path", "old_str", "new_str"]


def test_openai_definitions(api, sid):
    tools = api.get(f"/v1/memory_stores/{sid}/tools", {"format": "openai"}).json()["data"]
    assert [t["function"]["name"] for t in tools] == TOOL_NAMES
    assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in tools)
    responses = api.get(f"/v1/memory_stores/{sid}/tools", {"format": "openai_responses"}).json()["data"]
    assert [t["name"] for t in responses] == TOOL_NAMES and all(t["type"] == "function" for t in responses)
    bad = api.get(f"/v1/memory_stores/{sid}/tools", {"format": "xml"})
    assert bad.status_code == 400


def test_definitions_are_accepted_by_the_sdks(api, sid):
    """The definitions type-check as the SDKs' own tool params."""
    from anthropic.types import ToolParam
    from openai.types.chat import ChatCompletionToolParam
    from pydantic import TypeAdapter

    for tool in api.get(f"/v1/memory_stores/{sid}/tools").json()["data"]:
        TypeAdapter(ToolParam).validate_python(tool)
    for tool in api.get(f"/v1/memory_stores/{sid}/tools", {"format": "openai"}).json()["data"]:
        TypeAdapter(ChatCompletionToolParam).validate_python(tool)


def test_write_read_edit_list_search_delete(api, sid):
    created = run(api, sid, "memory_write", {"path": "/prefs/style.md", "content": "Use tabs.\nDates are ISO-8601.\n"})
    assert created["type"] == "tool_result" and created["is_error"] is False
    assert created["content"] == "File created successfully at: /prefs/style.md"
    overwritten = run(api, sid, "memory_write", {"path": "/prefs/style.md", "content": "Use tabs.\nDates are ISO-8601.\nNo emoji.\n"})
    assert "overwritten" in overwritten["content"]
    run(api, sid, "memory_write", {"path": "/projects/foo/todo.md", "content": "- ship v2\n"})

    read = run(api, sid, "memory_read", {"path": "/prefs/style.md"})
    assert read["content"].startswith("Here's the content of /prefs/style.md with line numbers:\n")
    assert "     2\tDates are ISO-8601." in read["content"]
    assert read["output"]["content"] == "Use tabs.\nDates are ISO-8601.\nNo emoji.\n"
    ranged = run(api, sid, "memory_read", {"path": "/prefs/style.md", "view_range": [2, 2]})
    assert ranged["content"].endswith("     2\tDates are ISO-8601.")

    edited = run(api, sid, "memory_edit", {"path": "/prefs/style.md", "old_str": "Use tabs.", "new_str": "Use 2 spaces."})
    assert edited["is_error"] is False and "has been edited" in edited["content"]
    assert MemoryItem.objects.get(path="/prefs/style.md").content.startswith("Use 2 spaces.\n")

    listing = run(api, sid, "memory_list", {"depth": 1})
    assert [e["path"] for e in listing["output"]["entries"]] == ["/prefs/", "/projects/"]
    full = run(api, sid, "memory_list", {})
    assert [e["path"] for e in full["output"]["entries"]] == ["/prefs/style.md", "/projects/foo/todo.md"]

    found = run(api, sid, "memory_search", {"query": "iso-8601"})
    assert [m["path"] for m in found["output"]["matches"]] == ["/prefs/style.md"]
    assert found["output"]["matches"][0]["lines"] == [{"line": 2, "text": "Dates are ISO-8601."}]
    by_path = run(api, sid, "memory_search", {"query": "todo"})
    assert [m["path"] for m in by_path["output"]["matches"]] == ["/projects/foo/todo.md"]
    scoped = run(api, sid, "memory_search", {"query": "ship", "path_prefix": "/prefs/"})
    assert scoped["output"]["matches"] == []

    deleted = run(api, sid, "memory_delete", {"path": "/projects/foo/todo.md"})
    assert deleted["content"] == "Successfully deleted /projects/foo/todo.md"
    assert not MemoryItem.objects.filter(path="/projects/foo/todo.md").exists()
    ops = sorted(MemoryVersion.objects.values_list("operation", flat=True))
    assert ops == ["created", "created", "deleted", "modified", "modified"]


def test_search_chinese_and_short_queries(api, sid):
    run(api, sid, "memory_write", {"path": "/zh.md", "content": "用户喜欢喝咖啡。\n周末去爬山。"})
    assert [m["path"] for m in run(api, sid, "memory_search", {"query": "咖啡"})["output"]["matches"]] == ["/zh.md"]
    assert [m["path"] for m in run(api, sid, "memory_search", {"query": "周末去爬山"})["output"]["matches"]] == ["/zh.md"]
    assert run(api, sid, "memory_search", {"query": "茶"})["output"]["matches"] == []


def test_model_fixable_failures_are_error_results(api, sid):
    run(api, sid, "memory_write", {"path": "/a.md", "content": "x x\ny"})
    missing = run(api, sid, "memory_read", {"path": "/nope.md"})
    assert missing["is_error"] is True
    assert missing["content"] == "The path /nope.md does not exist. Please provide a valid path."
    none = run(api, sid, "memory_edit", {"path": "/a.md", "old_str": "zzz", "new_str": "q"})
    assert none["is_error"] and "did not appear verbatim in /a.md" in none["content"]
    many = run(api, sid, "memory_edit", {"path": "/a.md", "old_str": "x", "new_str": "q"})
    assert many["is_error"] and "Multiple occurrences of old_str `x` in lines: 1" in many["content"]
    assert MemoryItem.objects.get().content == "x x\ny"
    for name, bad in [
        ("memory_write", {"path": "/a.md"}),
        ("memory_write", {"path": "/a/../b", "content": "x"}),
        ("memory_write", {"path": "/a.md", "content": 3}),
        ("memory_write", {"path": "/big.md", "content": "x" * 102_401}),
        ("memory_read", {"path": "/a.md", "extra": 1}),
        ("memory_read", {"path": "/a.md", "view_range": [5, 9]}),
        ("memory_search", {"query": ""}),
        ("memory_list", {"path_prefix": "/no-slash"}),
        ("memory_delete", {"path": "/nope.md"}),
    ]:
        result = run(api, sid, name, bad)
        assert result["is_error"] is True, (name, bad)
        assert result["error"]["type"] in {"invalid_request_error", "not_found_error"}
    assert MemoryItem.objects.count() == 1


def test_protocol_errors(api, other_api, sid):
    assert api.post(f"/v1/memory_stores/{sid}/tools/memory_teleport", {"input": {}}, format="json").status_code == 404
    assert other_api.post(f"/v1/memory_stores/{sid}/tools/memory_list", {"input": {}}, format="json").status_code == 404
    assert other_api.get(f"/v1/memory_stores/{sid}/tools").status_code == 404
    assert api.post(f"/v1/memory_stores/{sid}/tools/memory_list", {"input": []}, format="json").json()["is_error"] is True
    assert api.post(f"/v1/memory_stores/{sid}/tools/memory_list", {"input": None}, format="json").status_code == 400


def test_readonly_key_reads_only(api, readonly_api, sid):
    run(api, sid, "memory_write", {"path": "/a.md", "content": "x"})
    assert run(readonly_api, sid, "memory_read", {"path": "/a.md"})["is_error"] is False
    assert run(readonly_api, sid, "memory_search", {"query": "x"})["is_error"] is False
    for name, tool_input in [("memory_write", {"path": "/b.md", "content": "y"}), ("memory_edit", {"path": "/a.md", "old_str": "x", "new_str": "y"}), ("memory_delete", {"path": "/a.md"})]:
        response = readonly_api.post(f"/v1/memory_stores/{sid}/tools/{name}", {"input": tool_input}, format="json")
        assert response.status_code == 403 and response.json()["error"]["type"] == "permission_error"
    assert [t["name"] for t in readonly_api.get(f"/v1/memory_stores/{sid}/tools").json()["data"]] == TOOL_NAMES[:3]
    assert MemoryItem.objects.get().content == "x"


def test_archived_store_write_is_an_error_result(api, sid):
    api.post(f"/v1/memory_stores/{sid}/archive")
    result = run(api, sid, "memory_write", {"path": "/a.md", "content": "x"})
    assert result["is_error"] and "archived" in result["content"]
    assert not MemoryItem.objects.exists()
