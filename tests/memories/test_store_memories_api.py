"""`/v1/memory_stores/{sid}/memories`: write (upsert), list, retrieve, update,
spec 001's versioned PUT, delete."""

from __future__ import annotations

import hashlib

import pytest

from memories.models import MemoryItem, MemoryVersion

pytestmark = pytest.mark.django_db


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _error(response, status, code):
    assert response.status_code == status, response.content
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == code, body
    return body["error"]["message"]


@pytest.fixture
def sid(api):
    return api.post("/v1/memory_stores", {"name": "Notes"}, format="json").json()["id"]


def write(api, sid, path, content, **extra):
    return api.post(f"/v1/memory_stores/{sid}/memories", {"path": path, "content": content, **extra}, format="json")


def test_write_creates_then_replaces(api, sid):
    created = write(api, sid, "/prefs/format.md", "Always use tabs.")
    assert created.status_code == 201
    memory = created.json()
    assert memory["type"] == "memory"
    assert memory["id"].startswith("mem_")
    assert memory["memory_store_id"] == sid
    assert memory["memory_version_id"].startswith("memver_")
    assert memory["path"] == "/prefs/format.md"
    assert memory["content"] is None  # write answers with the basic view by default
    assert memory["content_sha256"] == sha("Always use tabs.")
    assert memory["content_size_bytes"] == len("Always use tabs.")
    assert memory["version"] == 1

    replaced = write(api, sid, "/prefs/format.md", "Use 2 spaces.", )
    assert replaced.status_code == 200
    assert replaced.json()["id"] == memory["id"]
    assert replaced.json()["version"] == 2
    assert replaced.json()["memory_version_id"] != memory["memory_version_id"]
    ops = list(MemoryVersion.objects.filter(memory_id=memory["id"]).order_by("created_at", "id").values_list("operation", flat=True))
    assert ops == ["created", "modified"]
    item = MemoryItem.objects.get()
    assert (item.scope, item.type, item.scope_id, item.store_id) == ("store", "document", sid, sid)


def test_identical_rewrite_writes_no_version(api, sid):
    first = write(api, sid, "/a.md", "same").json()
    again = write(api, sid, "/a.md", "same")
    assert again.status_code == 200
    assert again.json()["memory_version_id"] == first["memory_version_id"]
    assert again.json()["updated_at"] == first["updated_at"]
    assert MemoryVersion.objects.count() == 1


def test_relative_path_names_the_same_memory(api, sid):
    first = write(api, sid, "notes/a.md", "x").json()
    assert first["path"] == "/notes/a.md"
    assert write(api, sid, "/notes/a.md", "y").json()["id"] == first["id"]


def test_write_view_full_and_empty_content(api, sid):
    response = api.post(f"/v1/memory_stores/{sid}/memories?view=full", {"path": "/e.md", "content": ""}, format="json")
    assert response.json()["content"] == ""
    assert response.json()["content_sha256"] == sha("")


def test_precondition_not_exists(api, sid):
    write(api, sid, "/a.md", "original")
    message = _error(write(api, sid, "/a.md", "new", precondition={"type": "not_exists"}), 409, "memory_precondition_failed")
    assert "/a.md" in message
    assert MemoryItem.objects.get().content == "original"
    assert MemoryVersion.objects.count() == 1
    assert write(api, sid, "/b.md", "fresh", precondition={"type": "not_exists"}).status_code == 201


def test_write_with_content_sha256_precondition(api, sid):
    write(api, sid, "/a.md", "v1")
    _error(write(api, sid, "/a.md", "v2", precondition={"type": "content_sha256", "content_sha256": sha("nope")}), 409, "memory_precondition_failed")
    _error(write(api, sid, "/zz.md", "v2", precondition={"type": "content_sha256", "content_sha256": sha("v1")}), 409, "memory_precondition_failed")
    assert write(api, sid, "/a.md", "v2", precondition={"type": "content_sha256", "content_sha256": sha("v1")}).status_code == 200


def test_precondition_conflict_says_not_to_retry(api, sid):
    write(api, sid, "/a.md", "x")
    response = write(api, sid, "/a.md", "y", precondition={"type": "not_exists"})
    assert response["x-should-retry"] == "false"


@pytest.mark.parametrize(
    "body",
    [
        {"path": "/a.md"},
        {"content": "x"},
        {"path": "/a.md", "content": None},
        {"path": "/a.md", "content": 5},
        {"path": "", "content": "x"},
        {"path": "/a/", "content": "x"},
        {"path": "/a/../b", "content": "x"},
        {"path": "/a//b", "content": "x"},
        {"path": "/a\u2028", "content": "x"},
        {"path": "/a.md", "content": "x", "precondition": {"type": "bogus"}},
        {"path": "/a.md", "content": "x", "precondition": {"type": "content_sha256", "content_sha256": "ABC"}},
        {"path": "/a.md", "content": "x", "precondition": "not_exists"},
    ],
)
def test_write_validation(api, sid, body):
    _error(api.post(f"/v1/memory_stores/{sid}/memories", body, format="json"), 400, "invalid_request_error")
    assert not MemoryItem.objects.exists()


def test_content_size_limit(api, sid):
    assert write(api, sid, "/max.md", "x" * 102_400).status_code == 201
    _error(write(api, sid, "/big.md", "x" * 102_401), 400, "invalid_request_error")
    _error(write(api, sid, "/big2.md", "é" * 51_201), 400, "invalid_request_error")  # bytes, not characters
    assert MemoryItem.objects.count() == 1


def test_retrieve_full_by_default_and_basic(api, sid):
    memory = write(api, sid, "/a.md", "hello").json()
    full = api.get(f"/v1/memory_stores/{sid}/memories/{memory['id']}").json()
    assert full["content"] == "hello"
    basic = api.get(f"/v1/memory_stores/{sid}/memories/{memory['id']}", {"view": "basic"}).json()
    assert basic["content"] is None and basic["content_sha256"] == sha("hello")
    _error(api.get(f"/v1/memory_stores/{sid}/memories/{memory['id']}", {"view": "everything"}), 400, "invalid_request_error")
    _error(api.get(f"/v1/memory_stores/{sid}/memories/mem_nope"), 404, "not_found_error")


def test_memory_of_another_store_is_404(api, sid):
    other = api.post("/v1/memory_stores", {"name": "Other"}, format="json").json()["id"]
    memory = write(api, other, "/a.md", "x").json()
    _error(api.get(f"/v1/memory_stores/{sid}/memories/{memory['id']}"), 404, "not_found_error")
    _error(api.post(f"/v1/memory_stores/{sid}/memories/{memory['id']}", {"content": "y"}, format="json"), 404, "not_found_error")
    _error(api.delete(f"/v1/memory_stores/{sid}/memories/{memory['id']}"), 404, "not_found_error")
    assert MemoryItem.objects.get().content == "x"


def test_update_content_and_rename(api, sid):
    memory = write(api, sid, "/a.md", "v1").json()
    url = f"/v1/memory_stores/{sid}/memories/{memory['id']}"
    renamed = api.post(url, {"path": "/archive/a.md"}, format="json").json()
    assert renamed["id"] == memory["id"] and renamed["path"] == "/archive/a.md"
    assert renamed["content"] is None and renamed["content_sha256"] == sha("v1")
    both = api.post(url + "?view=full", {"path": "/b.md", "content": "v2"}, format="json").json()
    assert both["path"] == "/b.md" and both["content"] == "v2" and both["version"] == 3
    versions = MemoryVersion.objects.filter(memory_id=memory["id"]).order_by("version")
    assert [(v.operation, v.path) for v in versions] == [("created", "/a.md"), ("modified", "/archive/a.md"), ("modified", "/b.md")]
    # No change at all: no version.
    api.post(url, {"content": "v2", "path": "/b.md"}, format="json")
    api.post(url, {}, format="json")
    assert MemoryVersion.objects.filter(memory_id=memory["id"]).count() == 3


def test_update_precondition_refers_to_current_content(api, sid):
    memory = write(api, sid, "/a.md", "v1").json()
    url = f"/v1/memory_stores/{sid}/memories/{memory['id']}"
    stale = {"type": "content_sha256", "content_sha256": sha("other")}
    _error(api.post(url, {"content": "v2", "precondition": stale}, format="json"), 409, "memory_precondition_failed")
    _error(api.post(url, {"path": "/moved.md", "precondition": stale}, format="json"), 409, "memory_precondition_failed")
    item = MemoryItem.objects.get()
    assert (item.content, item.path) == ("v1", "/a.md")
    good = {"type": "content_sha256", "content_sha256": sha("v1")}
    moved = api.post(url, {"path": "/moved.md", "content": "v2", "precondition": good}, format="json")
    assert moved.status_code == 200 and moved.json()["path"] == "/moved.md"


def test_rename_onto_taken_path(api, sid):
    a = write(api, sid, "/a.md", "a").json()
    write(api, sid, "/b.md", "b")
    url = f"/v1/memory_stores/{sid}/memories/{a['id']}"
    _error(api.post(url, {"path": "/b.md"}, format="json"), 409, "conflict_error")
    assert MemoryItem.objects.get(pk=a["id"]).path == "/a.md"
    # With precondition not_exists the rename is a no-op instead.
    noop = api.post(url, {"path": "/b.md", "precondition": {"type": "not_exists"}}, format="json")
    assert noop.status_code == 200 and noop.json()["path"] == "/a.md"
    # Renaming to its own path is fine.
    assert api.post(url, {"path": "/a.md"}, format="json").status_code == 200


def test_spec001_put_with_integer_version(api, sid):
    memory = write(api, sid, "notes/meeting.md", "v1").json()
    url = f"/v1/memory_stores/{sid}/memories/{memory['id']}"
    updated = api.put(url, {"content": "v2", "version": 1}, format="json")
    assert updated.status_code == 200
    assert updated.json()["content"] == "v2" and updated.json()["version"] == 2
    _error(api.put(url, {"content": "v3", "version": 1}, format="json"), 409, "memory_precondition_failed")
    assert MemoryItem.objects.get().content == "v2"
    for body in ({"content": "v3"}, {"version": 2}, {"content": "v3", "version": "2"}, {"content": "v3", "version": True}, {"content": "v3", "version": 0}):
        _error(api.put(url, body, format="json"), 400, "invalid_request_error")
    assert api.put(url, {"content": "v3", "version": 2}, format="json").json()["version"] == 3


def test_delete_writes_deleted_version(api, sid):
    memory = write(api, sid, "/a.md", "bye").json()
    response = api.delete(f"/v1/memory_stores/{sid}/memories/{memory['id']}")
    assert response.json() == {"id": memory["id"], "type": "memory_deleted"}
    assert not MemoryItem.objects.exists()
    deleted = MemoryVersion.objects.get(memory_id=memory["id"], operation="deleted")
    assert deleted.content is None and deleted.content_sha256 is None and deleted.path == "/a.md"
    _error(api.delete(f"/v1/memory_stores/{sid}/memories/{memory['id']}"), 404, "not_found_error")
    # The path is free again: a new memory, a new id.
    assert write(api, sid, "/a.md", "again").json()["id"] != memory["id"]


def test_conditional_delete(api, sid):
    memory = write(api, sid, "/a.md", "keep").json()
    url = f"/v1/memory_stores/{sid}/memories/{memory['id']}"
    _error(api.delete(url + f"?expected_content_sha256={sha('other')}"), 409, "memory_precondition_failed")
    _error(api.delete(url + "?expected_content_sha256=xyz"), 400, "invalid_request_error")
    assert MemoryItem.objects.exists()
    assert MemoryVersion.objects.filter(operation="deleted").count() == 0
    assert api.delete(url + f"?expected_content_sha256={sha('keep')}").status_code == 200


def test_cross_workspace_and_readonly(api, other_api, readonly_api, sid):
    memory = write(api, sid, "/a.md", "x").json()
    url = f"/v1/memory_stores/{sid}/memories/{memory['id']}"
    for response in (
        other_api.get(f"/v1/memory_stores/{sid}/memories"),
        other_api.get(url),
        write(other_api, sid, "/b.md", "x"),
        other_api.post(url, {"content": "y"}, format="json"),
        other_api.put(url, {"content": "y", "version": 1}, format="json"),
        other_api.delete(url),
    ):
        _error(response, 404, "not_found_error")
    assert readonly_api.get(url).status_code == 200
    assert readonly_api.get(f"/v1/memory_stores/{sid}/memories").status_code == 200
    for response in (
        write(readonly_api, sid, "/b.md", "x"),
        readonly_api.post(url, {"content": "y"}, format="json"),
        readonly_api.put(url, {"content": "y", "version": 1}, format="json"),
        readonly_api.delete(url),
    ):
        _error(response, 403, "permission_error")
    assert MemoryItem.objects.get().content == "x"


def test_write_to_unknown_store_is_404(api):
    _error(write(api, "memstore_nope", "/a.md", "x"), 404, "not_found_error")


def test_unrouted_methods_are_405(api, sid):
    for response in (
        api.put(f"/v1/memory_stores/{sid}/memories", {"content": "x", "version": 1}, format="json"),
        api.patch(f"/v1/memory_stores/{sid}/memories", {}, format="json"),
        api.delete("/v1/memory_stores"),
        api.patch(f"/v1/memory_stores/{sid}", {}, format="json"),
        api.put(f"/v1/memory_stores/{sid}/memory_versions", {}, format="json"),
    ):
        _error(response, 405, "invalid_request_error")
