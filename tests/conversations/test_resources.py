"""`GET/PUT /v1/conversations/{cid}/resources`: attached memory stores, and the
memory tools run on behalf of a conversation through its attachments."""

from __future__ import annotations

import pytest

from conversations.models import Branch, Conversation
from conversations.services import conversation_get_or_create
from memories.models import MemoryItem, MemoryVersion
from memories.resources.models import ConversationResource

pytestmark = pytest.mark.django_db


def _error(response, status, code):
    assert response.status_code == status, response.content
    assert response.json()["error"]["type"] == code, response.json()


def _store(api, name="User Preferences", description="Per-user prefs."):
    return api.post("/v1/memory_stores", {"name": name, "description": description}, format="json").json()["id"]


def put(api, cid, resources):
    return api.put(f"/v1/conversations/{cid}/resources", {"resources": resources}, format="json")


def test_put_then_get(api, workspace):
    conversation_get_or_create(workspace=workspace, external_id="chat-1")
    rw, ro = _store(api), _store(api, name="Team Wiki", description="")
    response = put(
        api,
        "chat-1",
        [
            {"type": "memory_store", "memory_store_id": rw, "prompt": "Check before any task."},
            {"type": "memory_store", "memory_store_id": ro, "access": "read_only", "instructions": "Reference only."},
        ],
    )
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["conversation_id"] == "chat-1"
    assert data["resources"] == [
        {
            "type": "memory_store",
            "memory_store_id": rw,
            "access": "read_write",
            "instructions": "Check before any task.",
            "name": "User Preferences",
            "description": "Per-user prefs.",
            "mount_path": "/mnt/memory/user-preferences",
        },
        {
            "type": "memory_store",
            "memory_store_id": ro,
            "access": "read_only",
            "instructions": "Reference only.",
            "name": "Team Wiki",
            "description": "",
            "mount_path": "/mnt/memory/team-wiki",
        },
    ]
    assert api.get("/v1/conversations/chat-1/resources").json() == response.json()


def test_put_replaces_and_reorders(api, workspace):
    a, b, c = _store(api, "a"), _store(api, "b"), _store(api, "c")
    put(api, "chat", [{"type": "memory_store", "memory_store_id": s} for s in (a, b)])
    response = put(api, "chat", [{"type": "memory_store", "memory_store_id": c}, {"type": "memory_store", "memory_store_id": a, "access": "read_only"}])
    got = [(r["memory_store_id"], r["access"]) for r in response.json()["data"]["resources"]]
    assert got == [(c, "read_write"), (a, "read_only")]
    assert ConversationResource.objects.count() == 2
    assert put(api, "chat", []).json()["data"]["resources"] == []
    assert ConversationResource.objects.count() == 0


def test_put_creates_the_conversation(api, workspace):
    sid = _store(api)
    assert put(api, "new-chat", [{"type": "memory_store", "memory_store_id": sid}]).status_code == 200
    conversation = Conversation.objects.get(external_id="new-chat")
    assert Branch.objects.filter(conversation=conversation, name="main").exists()


def test_get_unknown_conversation_is_404(api):
    _error(api.get("/v1/conversations/nope/resources"), 404, "not_found_error")


def test_duplicate_names_get_distinct_mount_paths(api):
    a, b = _store(api, "Notes"), _store(api, "notes!")
    resources = put(api, "c", [{"type": "memory_store", "memory_store_id": a}, {"type": "memory_store", "memory_store_id": b}]).json()["data"]["resources"]
    assert [r["mount_path"] for r in resources] == ["/mnt/memory/notes", "/mnt/memory/notes-"]
    c = _store(api, "NOTES")
    resources = put(api, "c", [{"type": "memory_store", "memory_store_id": s} for s in (a, c)]).json()["data"]["resources"]
    assert [r["mount_path"] for r in resources] == ["/mnt/memory/notes", "/mnt/memory/notes-2"]


def test_validation(api, workspace):
    sid = _store(api)
    ok = {"type": "memory_store", "memory_store_id": sid}
    for body in (
        {},
        {"resources": "x"},
        {"resources": [ok] * 2},
        {"resources": [{**ok, "type": "file"}]},
        {"resources": [{"type": "memory_store"}]},
        {"resources": [{**ok, "access": "write_only"}]},
        {"resources": [{**ok, "instructions": "x" * 4097}]},
        {"resources": [{**ok, "instructions": "a", "prompt": "b"}]},
        {"resources": [{**ok, "instructions": 5}]},
        {"resources": ["memstore_x"]},
    ):
        _error(api.put("/v1/conversations/c/resources", body, format="json"), 400, "invalid_request_error")
    assert put(api, "c", [{**ok, "instructions": "x" * 4096, "prompt": "x" * 4096}]).status_code == 200
    stores = [_store(api, f"s{i}") for i in range(9)]
    _error(put(api, "c", [{"type": "memory_store", "memory_store_id": s} for s in stores]), 400, "invalid_request_error")
    assert put(api, "c", [{"type": "memory_store", "memory_store_id": s} for s in stores[:8]]).status_code == 200


def test_unknown_or_foreign_store_is_404(api, other_api):
    foreign = _store(other_api)
    mine = _store(api)
    put(api, "c", [{"type": "memory_store", "memory_store_id": mine}])
    _error(put(api, "c", [{"type": "memory_store", "memory_store_id": foreign}]), 404, "not_found_error")
    _error(put(api, "c", [{"type": "memory_store", "memory_store_id": "memstore_nope"}]), 404, "not_found_error")
    assert list(ConversationResource.objects.values_list("memory_store_id", flat=True)) == [mine]


def test_archived_store_cannot_be_newly_attached(api):
    kept, fresh = _store(api, "kept"), _store(api, "fresh")
    put(api, "c", [{"type": "memory_store", "memory_store_id": kept}])
    api.post(f"/v1/memory_stores/{kept}/archive")
    api.post(f"/v1/memory_stores/{fresh}/archive")
    assert put(api, "c", [{"type": "memory_store", "memory_store_id": kept, "access": "read_only"}]).status_code == 200
    _error(put(api, "c", [{"type": "memory_store", "memory_store_id": fresh}]), 400, "invalid_request_error")


def test_other_workspace_and_readonly_key(api, other_api, readonly_api, workspace):
    sid = _store(api)
    put(api, "c", [{"type": "memory_store", "memory_store_id": sid}])
    _error(other_api.get("/v1/conversations/c/resources"), 404, "not_found_error")
    assert readonly_api.get("/v1/conversations/c/resources").status_code == 200
    _error(put(readonly_api, "c", []), 403, "permission_error")
    assert ConversationResource.objects.count() == 1


def test_get_query_count(api, django_assert_max_num_queries):
    put(api, "c", [{"type": "memory_store", "memory_store_id": _store(api, f"s{i}")} for i in range(8)])
    with django_assert_max_num_queries(4):
        assert len(api.get("/v1/conversations/c/resources").json()["data"]["resources"]) == 8


# --- tools on behalf of a conversation -----------------------------------------------


def tool(api, sid, name, tool_input, cid):
    return api.post(f"/v1/memory_stores/{sid}/tools/{name}", {"input": tool_input, "conversation_id": cid}, format="json")


def test_tool_write_records_the_conversation_as_session_actor(api):
    sid = _store(api)
    put(api, "chat-7", [{"type": "memory_store", "memory_store_id": sid}])
    result = tool(api, sid, "memory_write", {"path": "/learned.md", "content": "User likes tea."}, "chat-7").json()
    assert result["is_error"] is False
    version = api.get(f"/v1/memory_stores/{sid}/memory_versions").json()["data"][0]
    assert version["created_by"] == {"type": "session_actor", "session_id": "chat-7"}
    filtered = api.get(f"/v1/memory_stores/{sid}/memory_versions", {"session_id": "chat-7"}).json()["data"]
    assert [v["id"] for v in filtered] == [version["id"]]


def test_read_only_attachment_refuses_write_tools(api):
    sid = _store(api)
    api.post(f"/v1/memory_stores/{sid}/memories", {"path": "/a.md", "content": "fact"}, format="json")
    put(api, "chat", [{"type": "memory_store", "memory_store_id": sid, "access": "read_only"}])
    assert tool(api, sid, "memory_read", {"path": "/a.md"}, "chat").json()["output"]["content"] == "fact"
    for name, tool_input in (
        ("memory_write", {"path": "/b.md", "content": "x"}),
        ("memory_edit", {"path": "/a.md", "old_str": "fact", "new_str": "lie"}),
        ("memory_delete", {"path": "/a.md"}),
    ):
        _error(tool(api, sid, name, tool_input, "chat"), 403, "permission_error")
    assert MemoryItem.objects.get().content == "fact"
    assert MemoryVersion.objects.count() == 1
    tools = api.get(f"/v1/memory_stores/{sid}/tools", {"conversation_id": "chat"}).json()["data"]
    assert [t["name"] for t in tools] == ["memory_list", "memory_search", "memory_read"]


def test_unattached_store_or_unknown_conversation(api, workspace):
    sid = _store(api)
    conversation_get_or_create(workspace=workspace, external_id="plain")
    _error(tool(api, sid, "memory_list", {}, "plain"), 403, "permission_error")
    _error(tool(api, sid, "memory_list", {}, "ghost"), 404, "not_found_error")


def test_snapshots_survive_store_changes_until_next_put(api):
    sid = _store(api, "Team Notes", "Shared notes.")
    put(api, "c", [{"type": "memory_store", "memory_store_id": sid}])
    api.post(f"/v1/memory_stores/{sid}", {"name": "Renamed", "description": "New."}, format="json")
    snap = api.get("/v1/conversations/c/resources").json()["data"]["resources"][0]
    assert (snap["name"], snap["description"], snap["mount_path"]) == ("Team Notes", "Shared notes.", "/mnt/memory/team-notes")
    fresh = put(api, "c", [{"type": "memory_store", "memory_store_id": sid}]).json()["data"]["resources"][0]
    assert (fresh["name"], fresh["description"], fresh["mount_path"]) == ("Renamed", "New.", "/mnt/memory/renamed")
    row = ConversationResource.objects.get()
    assert (row.store_name, row.mount_path) == ("Renamed", "/mnt/memory/renamed")


def test_spec001_memory_store_ids_shorthand(api):
    a, b = _store(api, "a"), _store(api, "b")
    response = api.put("/v1/conversations/c/resources", {"memory_store_ids": [a, b]}, format="json")
    assert [(r["memory_store_id"], r["access"]) for r in response.json()["data"]["resources"]] == [(a, "read_write"), (b, "read_write")]
    both = api.put("/v1/conversations/c/resources", {"memory_store_ids": [a], "resources": []}, format="json")
    _error(both, 400, "invalid_request_error")
    _error(api.put("/v1/conversations/c/resources", {"memory_store_ids": "x"}, format="json"), 400, "invalid_request_error")


def test_context_lists_the_attached_stores_and_reads_none_without_them(api, workspace):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    conversation_get_or_create(workspace=workspace, external_id="chat-1")
    with CaptureQueriesContext(connection) as queries:
        data = api.post("/v1/conversations/chat-1/context", {}, format="json").json()["data"]
    assert data["memory_stores"] == []
    # The branch's read says there is nothing attached (an EXISTS); no read of the attachments follows.
    assert not [q for q in queries.captured_queries if q["sql"].startswith('SELECT "conversations_conversationresource"')]
    wiki = _store(api, name="Team Wiki", description="Shared notes.")
    assert put(api, "chat-1", [{"type": "memory_store", "memory_store_id": wiki, "access": "read_only",
                                "instructions": "Reference only."}]).status_code == 200
    data = api.post("/v1/conversations/chat-1/context", {}, format="json").json()["data"]
    assert data["memory_stores"] == [{"memory_store_id": wiki, "name": "Team Wiki", "description": "Shared notes.",
                                      "access": "read_only", "instructions": "Reference only.",
                                      "mount_path": "/mnt/memory/team-wiki"}]
    assert "Team Wiki (read_only, /mnt/memory/team-wiki): Shared notes." in data["system"]
    # Detached again: nothing listed.
    assert put(api, "chat-1", []).status_code == 200
    assert api.post("/v1/conversations/chat-1/context", {}, format="json").json()["data"]["memory_stores"] == []
