"""`/v1/memory_stores`: create, retrieve, update, list, archive, delete."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import MemoryItem, MemoryStore, MemoryVersion

pytestmark = pytest.mark.django_db


def _create(api, **body):
    body.setdefault("name", "Prefs")
    response = api.post("/v1/memory_stores", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _error(response, status, code):
    assert response.status_code == status, response.content
    body = response.json()
    assert body["type"] == "error"
    assert body["error"]["type"] == code
    return body["error"]["message"]


def test_create_and_retrieve(api):
    store = _create(api, name="User Preferences", description="Per-user prefs.", metadata={"user": "u1"})
    assert store["type"] == "memory_store"
    assert store["id"].startswith("memstore_")
    assert store["name"] == "User Preferences"
    assert store["description"] == "Per-user prefs."
    assert store["metadata"] == {"user": "u1"}
    assert store["archived_at"] is None
    assert store["entry_count"] == 0 and store["total_size"] == 0
    assert store["created_at"] and store["updated_at"]

    got = api.get(f"/v1/memory_stores/{store['id']}").json()
    assert got == store


def test_description_defaults_to_empty_string(api):
    store = _create(api, name="x")
    assert store["description"] == "" and store["metadata"] == {}


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": ""},
        {"name": "x" * 256},
        {"name": 5},
        {"name": "a\x07b"},
        {"name": "ok", "description": "d" * 1025},
        {"name": "ok", "description": 3},
        {"name": "ok", "metadata": {"k": 1}},
        {"name": "ok", "metadata": {"": "v"}},
        {"name": "ok", "metadata": {"k" * 65: "v"}},
        {"name": "ok", "metadata": {"k": "v" * 513}},
        {"name": "ok", "metadata": {f"k{i}": "v" for i in range(17)}},
        {"name": "ok", "metadata": ["k"]},
        {"name": "ok", "metadata": {"k": None}},
    ],
)
def test_create_validation(api, body):
    _error(api.post("/v1/memory_stores", body, format="json"), 400, "invalid_request_error")
    assert MemoryStore.objects.count() == 0


def test_create_accepts_limits(api):
    store = _create(
        api, name="n" * 255, description="d" * 1024, metadata={f"{i:02d}" + "k" * 62: "v" * 512 for i in range(16)}
    )
    assert len(store["metadata"]) == 16


def test_update_merges_metadata_and_null_removes(api):
    store = _create(api, metadata={"a": "1", "b": "2"})
    response = api.post(
        f"/v1/memory_stores/{store['id']}", {"metadata": {"a": None, "c": "3"}, "name": "Renamed"}, format="json"
    )
    assert response.status_code == 200, response.content
    updated = response.json()
    assert updated["metadata"] == {"b": "2", "c": "3"}
    assert updated["name"] == "Renamed"
    assert updated["description"] == ""
    assert updated["updated_at"] >= store["updated_at"]
    # Null fields leave the value alone; "" clears the description.
    api.post(f"/v1/memory_stores/{store['id']}", {"description": "about"}, format="json")
    same = api.post(f"/v1/memory_stores/{store['id']}", {"name": None, "description": None}, format="json").json()
    assert same["name"] == "Renamed" and same["description"] == "about"
    cleared = api.post(f"/v1/memory_stores/{store['id']}", {"description": ""}, format="json").json()
    assert cleared["description"] == ""


def test_update_rejects_metadata_over_16_after_merge(api):
    store = _create(api, metadata={f"k{i}": "v" for i in range(16)})
    _error(api.post(f"/v1/memory_stores/{store['id']}", {"metadata": {"new": "v"}}, format="json"), 400, "invalid_request_error")
    # Replacing one key while removing another stays within the limit.
    ok = api.post(f"/v1/memory_stores/{store['id']}", {"metadata": {"k0": None, "new": "v"}}, format="json")
    assert ok.status_code == 200
    assert MemoryStore.objects.get().metadata.get("new") == "v"


def test_update_validation_changes_nothing(api):
    store = _create(api, name="Keep")
    _error(api.post(f"/v1/memory_stores/{store['id']}", {"name": ""}, format="json"), 400, "invalid_request_error")
    assert MemoryStore.objects.get().name == "Keep"


def test_list_newest_first_with_paging_and_filters(api, django_assert_max_num_queries):
    ids = [_create(api, name=f"s{i}")["id"] for i in range(5)]
    # Spread creation times so the range filter has something to cut.
    base = timezone.now() - timedelta(days=10)
    for i, store_id in enumerate(ids):
        MemoryStore.objects.filter(pk=store_id).update(created_at=base + timedelta(days=i))
    with django_assert_max_num_queries(4):
        page = api.get("/v1/memory_stores", {"limit": 2}).json()
    assert [s["id"] for s in page["data"]] == [ids[4], ids[3]]
    assert page["next_page"]
    seen = [s["id"] for s in page["data"]]
    while page["next_page"]:
        page = api.get("/v1/memory_stores", {"limit": 2, "page": page["next_page"]}).json()
        seen += [s["id"] for s in page["data"]]
    assert seen == ids[::-1]

    ranged = api.get(
        "/v1/memory_stores",
        {"created_at[gte]": (base + timedelta(days=1)).isoformat(), "created_at[lte]": (base + timedelta(days=3)).isoformat()},
    ).json()
    assert [s["id"] for s in ranged["data"]] == [ids[3], ids[2], ids[1]]
    assert ranged["next_page"] is None
    plain = api.get("/v1/memory_stores", {"created_at_gte": (base + timedelta(days=4)).isoformat()}).json()
    assert [s["id"] for s in plain["data"]] == [ids[4]]


def test_list_statistics_without_n_plus_one(api, workspace, django_assert_max_num_queries):
    for i in range(6):
        store = _create(api, name=f"s{i}")
        for j in range(i):
            api.post(f"/v1/memory_stores/{store['id']}/memories", {"path": f"/f{j}.md", "content": "x" * (j + 1)}, format="json")
    with django_assert_max_num_queries(4):
        data = api.get("/v1/memory_stores", {"limit": 100}).json()["data"]
    stats = {s["name"]: (s["entry_count"], s["total_size"]) for s in data}
    assert stats == {f"s{i}": (i, sum(range(1, i + 1))) for i in range(6)}


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 0},
        {"limit": 101},
        {"limit": "x"},
        {"limit": ""},
        {"include_archived": "maybe"},
        {"include_archived": ""},
        {"created_at[gte]": "yesterday"},
        {"created_at[lte]": ""},
        {"page": "forged"},
    ],
)
def test_list_validation(api, params):
    _error(api.get("/v1/memory_stores", params), 400, "invalid_request_error")


def test_archive_is_read_and_delete_only(api):
    store = _create(api)
    sid = store["id"]
    written = api.post(f"/v1/memory_stores/{sid}/memories", {"path": "/a.md", "content": "hello"}, format="json").json()
    archived = api.post(f"/v1/memory_stores/{sid}/archive").json()
    assert archived["archived_at"] is not None
    again = api.post(f"/v1/memory_stores/{sid}/archive").json()
    assert again["archived_at"] == archived["archived_at"]

    # Writes: 400, nothing changes.
    _error(api.post(f"/v1/memory_stores/{sid}", {"name": "x"}, format="json"), 400, "invalid_request_error")
    _error(api.post(f"/v1/memory_stores/{sid}/memories", {"path": "/b.md", "content": "x"}, format="json"), 400, "invalid_request_error")
    _error(api.post(f"/v1/memory_stores/{sid}/memories/{written['id']}", {"content": "x"}, format="json"), 400, "invalid_request_error")
    _error(api.put(f"/v1/memory_stores/{sid}/memories/{written['id']}", {"content": "x", "version": 1}, format="json"), 400, "invalid_request_error")
    assert MemoryItem.objects.get().content == "hello"

    # Reads, list and delete still work.
    assert api.get(f"/v1/memory_stores/{sid}/memories/{written['id']}").json()["content"] == "hello"
    assert api.get("/v1/memory_stores").json()["data"] == []
    listed = api.get("/v1/memory_stores", {"include_archived": "true"}).json()["data"]
    assert [s["id"] for s in listed] == [sid]
    assert api.delete(f"/v1/memory_stores/{sid}/memories/{written['id']}").status_code == 200
    assert api.delete(f"/v1/memory_stores/{sid}").json() == {"id": sid, "type": "memory_store_deleted"}


def test_delete_removes_memories_and_versions(api):
    store = _create(api)
    other = _create(api, name="other")
    for sid in (store["id"], other["id"]):
        api.post(f"/v1/memory_stores/{sid}/memories", {"path": "/a.md", "content": "v1"}, format="json")
        api.post(f"/v1/memory_stores/{sid}/memories", {"path": "/a.md", "content": "v2"}, format="json")
    response = api.delete(f"/v1/memory_stores/{store['id']}")
    assert response.json() == {"id": store["id"], "type": "memory_store_deleted"}
    assert not MemoryItem.objects.filter(store_id=store["id"]).exists()
    assert not MemoryVersion.objects.filter(store_id=store["id"]).exists()
    assert MemoryVersion.objects.filter(store_id=other["id"]).count() == 2
    _error(api.get(f"/v1/memory_stores/{store['id']}"), 404, "not_found_error")
    _error(api.delete(f"/v1/memory_stores/{store['id']}"), 404, "not_found_error")


def test_other_workspace_gets_404(api, other_api):
    store = _create(api)
    sid = store["id"]
    _error(other_api.get(f"/v1/memory_stores/{sid}"), 404, "not_found_error")
    _error(other_api.post(f"/v1/memory_stores/{sid}", {"name": "x"}, format="json"), 404, "not_found_error")
    _error(other_api.post(f"/v1/memory_stores/{sid}/archive"), 404, "not_found_error")
    _error(other_api.delete(f"/v1/memory_stores/{sid}"), 404, "not_found_error")
    assert other_api.get("/v1/memory_stores").json() == {"data": [], "next_page": None}
    assert MemoryStore.objects.get().name == "Prefs"


def test_readonly_key_reads_but_cannot_write(api, readonly_api):
    store = _create(api)
    assert readonly_api.get(f"/v1/memory_stores/{store['id']}").status_code == 200
    assert readonly_api.get("/v1/memory_stores").status_code == 200
    _error(readonly_api.post("/v1/memory_stores", {"name": "x"}, format="json"), 403, "permission_error")
    _error(readonly_api.post(f"/v1/memory_stores/{store['id']}", {"name": "x"}, format="json"), 403, "permission_error")
    _error(readonly_api.post(f"/v1/memory_stores/{store['id']}/archive"), 403, "permission_error")
    _error(readonly_api.delete(f"/v1/memory_stores/{store['id']}"), 403, "permission_error")
    assert MemoryStore.objects.get().archived_at is None


def test_anonymous_is_401(anon_api):
    _error(anon_api.get("/v1/memory_stores"), 401, "authentication_error")


def test_x_api_key_and_workspace_header(api_key, workspace, client):
    response = client.get("/v1/memory_stores", HTTP_X_API_KEY=api_key, HTTP_ANTHROPIC_WORKSPACE_ID=workspace.pk)
    assert response.status_code == 200
    response = client.get("/v1/memory_stores", HTTP_X_API_KEY=api_key, HTTP_ANTHROPIC_WORKSPACE_ID="ws_other")
    _error(response, 400, "invalid_request_error")


def test_openapi_schema_describes_the_store_routes(client):
    response = client.get("/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    text = response.content.decode()
    for operation in (
        "memory_stores_create",
        "memory_stores_memories_write",
        "memory_stores_memories_put",
        "memory_stores_memory_versions_redact",
        "memory_stores_tools_execute",
        "conversations_resources_replace",
    ):
        assert operation in text
