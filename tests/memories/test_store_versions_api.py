"""`/v1/memory_stores/{sid}/memory_versions`: list (filters, paging, views),
retrieve, redact (also under spec 001's `/versions/...`)."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import MemoryVersion
from tests.factories import make_api_key

pytestmark = pytest.mark.django_db


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _error(response, status, code):
    assert response.status_code == status, response.content
    assert response.json()["error"]["type"] == code, response.json()


@pytest.fixture
def sid(api):
    return api.post("/v1/memory_stores", {"name": "History"}, format="json").json()["id"]


@pytest.fixture
def history(api, sid):
    """One memory created, modified twice, and another created and deleted."""
    a = api.post(f"/v1/memory_stores/{sid}/memories", {"path": "/a.md", "content": "v1"}, format="json").json()
    api.post(f"/v1/memory_stores/{sid}/memories", {"path": "/a.md", "content": "v2"}, format="json")
    api.post(f"/v1/memory_stores/{sid}/memories/{a['id']}", {"content": "v3"}, format="json")
    b = api.post(f"/v1/memory_stores/{sid}/memories", {"path": "/b.md", "content": "secret"}, format="json").json()
    api.delete(f"/v1/memory_stores/{sid}/memories/{b['id']}")
    return a["id"], b["id"]


def _list(api, sid, **params):
    response = api.get(f"/v1/memory_stores/{sid}/memory_versions", params)
    assert response.status_code == 200, response.content
    return response.json()


def test_list_newest_first_without_content(api, sid, history, api_key, workspace):
    a, b = history
    page = _list(api, sid)
    ops = [(v["memory_id"], v["operation"]) for v in page["data"]]
    assert ops == [(b, "deleted"), (b, "created"), (a, "modified"), (a, "modified"), (a, "created")]
    first = page["data"][-1]
    assert first["type"] == "memory_version" and first["id"].startswith("memver_")
    assert first["memory_store_id"] == sid
    assert first["content"] is None and first["content_sha256"] == sha("v1") and first["content_size_bytes"] == 2
    assert first["path"] == "/a.md"
    assert first["redacted_at"] is None and first["redacted_by"] is None
    key_id = workspace.api_keys.get().pk
    assert first["created_by"] == {"type": "api_actor", "api_key_id": key_id}
    deleted = page["data"][0]
    assert deleted["content_sha256"] is None and deleted["content_size_bytes"] is None and deleted["path"] == "/b.md"


def test_memory_version_id_is_the_head(api, sid, history):
    a, _ = history
    memory = api.get(f"/v1/memory_stores/{sid}/memories/{a}").json()
    newest = _list(api, sid, memory_id=a)["data"][0]
    assert memory["memory_version_id"] == newest["id"]


def test_filters(api, sid, history, workspace):
    a, b = history
    assert {v["memory_id"] for v in _list(api, sid, memory_id=b)["data"]} == {b}
    assert len(_list(api, sid, memory_id=b)["data"]) == 2  # still listed after the memory is deleted
    assert [v["operation"] for v in _list(api, sid, operation="modified")["data"]] == ["modified", "modified"]
    key_id = workspace.api_keys.get().pk
    assert len(_list(api, sid, api_key_id=key_id)["data"]) == 5
    assert _list(api, sid, api_key_id="apikey_other")["data"] == []
    assert _list(api, sid, session_id="conv-1")["data"] == []
    # Time range: push the oldest two into the past.
    old = MemoryVersion.objects.filter(memory_id=a).order_by("created_at", "id")[:2]
    past = timezone.now() - timedelta(days=3)
    MemoryVersion.objects.filter(pk__in=[v.pk for v in old]).update(created_at=past)
    recent = _list(api, sid, **{"created_at[gte]": (past + timedelta(days=1)).isoformat()})["data"]
    assert len(recent) == 3
    older = _list(api, sid, **{"created_at[lte]": (past + timedelta(seconds=1)).isoformat()})["data"]
    assert len(older) == 2


def test_paging_and_view(api, sid, history, django_assert_max_num_queries):
    seen = []
    with django_assert_max_num_queries(4):
        page = _list(api, sid, limit=2)
    seen += page["data"]
    while page["next_page"]:
        page = _list(api, sid, limit=2, page=page["next_page"])
        assert len(page["data"]) <= 2
        seen += page["data"]
    assert [v["id"] for v in seen] == [v["id"] for v in _list(api, sid, limit=100)["data"]]
    with django_assert_max_num_queries(4):
        full = _list(api, sid, view="full", limit=100)["data"]
    assert [v["content"] for v in full] == [None, "secret", "v3", "v2", "v1"]


@pytest.mark.parametrize("params", [{"operation": "renamed"}, {"operation": ""}, {"limit": 0}, {"view": "x"}, {"page": "bad"}, {"created_at[gte]": "soon"}])
def test_list_validation(api, sid, params):
    _error(api.get(f"/v1/memory_stores/{sid}/memory_versions", params), 400, "invalid_request_error")


def test_retrieve_with_content(api, sid, history):
    a, _ = history
    oldest = _list(api, sid, memory_id=a)["data"][-1]
    got = api.get(f"/v1/memory_stores/{sid}/memory_versions/{oldest['id']}").json()
    assert got["content"] == "v1" and got["operation"] == "created"
    basic = api.get(f"/v1/memory_stores/{sid}/memory_versions/{oldest['id']}", {"view": "basic"}).json()
    assert basic["content"] is None
    alias = api.get(f"/v1/memory_stores/{sid}/versions/{oldest['id']}").json()
    assert alias == got
    _error(api.get(f"/v1/memory_stores/{sid}/memory_versions/memver_nope"), 404, "not_found_error")


def test_redact(api, sid, history, workspace):
    a, b = history
    versions = _list(api, sid, memory_id=b)["data"]
    created = [v for v in versions if v["operation"] == "created"][0]
    redacted = api.post(f"/v1/memory_stores/{sid}/memory_versions/{created['id']}/redact")
    assert redacted.status_code == 200
    body = redacted.json()
    assert body["content"] is None and body["content_sha256"] is None
    assert body["content_size_bytes"] is None and body["path"] is None
    assert body["redacted_at"] is not None
    key_id = workspace.api_keys.get().pk
    assert body["redacted_by"] == {"type": "api_actor", "api_key_id": key_id}
    assert body["created_by"] == created["created_by"] and body["created_at"] == created["created_at"]
    row = MemoryVersion.objects.get(pk=created["id"])
    assert row.content is None and row.path is None
    # Idempotent; retrieve still works.
    assert api.post(f"/v1/memory_stores/{sid}/memory_versions/{created['id']}/redact").status_code == 200
    assert api.get(f"/v1/memory_stores/{sid}/memory_versions/{created['id']}").json()["redacted_at"] == body["redacted_at"]


def test_redact_via_spec001_route_and_head_refusal(api, sid, history):
    a, _ = history
    versions = _list(api, sid, memory_id=a)["data"]
    head, older = versions[0], versions[-1]
    _error(api.post(f"/v1/memory_stores/{sid}/memory_versions/{head['id']}/redact"), 409, "conflict_error")
    assert MemoryVersion.objects.get(pk=head["id"]).content == "v3"
    response = api.post(f"/v1/memory_stores/{sid}/versions/{older['id']}/redact")
    assert response.status_code == 200 and response.json()["redacted_at"]


def test_redact_allowed_in_archived_store(api, sid, history):
    _, b = history
    created = _list(api, sid, memory_id=b, operation="created")["data"][0]
    api.post(f"/v1/memory_stores/{sid}/archive")
    assert api.post(f"/v1/memory_stores/{sid}/memory_versions/{created['id']}/redact").status_code == 200


def test_cross_workspace_and_readonly(api, other_api, readonly_api, sid, history):
    a, _ = history
    vid = _list(api, sid, memory_id=a)["data"][-1]["id"]
    _error(other_api.get(f"/v1/memory_stores/{sid}/memory_versions"), 404, "not_found_error")
    _error(other_api.get(f"/v1/memory_stores/{sid}/memory_versions/{vid}"), 404, "not_found_error")
    _error(other_api.post(f"/v1/memory_stores/{sid}/memory_versions/{vid}/redact"), 404, "not_found_error")
    assert readonly_api.get(f"/v1/memory_stores/{sid}/memory_versions").status_code == 200
    _error(readonly_api.post(f"/v1/memory_stores/{sid}/memory_versions/{vid}/redact"), 403, "permission_error")
    assert MemoryVersion.objects.get(pk=vid).content == "v1"
    # A version of another store of the same workspace is 404 under this store.
    other_sid = api.post("/v1/memory_stores", {"name": "Else"}, format="json").json()["id"]
    _error(api.get(f"/v1/memory_stores/{other_sid}/memory_versions/{vid}"), 404, "not_found_error")
    _error(api.post(f"/v1/memory_stores/{other_sid}/memory_versions/{vid}/redact"), 404, "not_found_error")


def test_versions_record_each_key(api, sid, workspace):
    second = make_api_key(workspace, name="second")
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_X_API_KEY=second)
    api.post(f"/v1/memory_stores/{sid}/memories", {"path": "/a.md", "content": "1"}, format="json")
    client.post(f"/v1/memory_stores/{sid}/memories", {"path": "/a.md", "content": "2"}, format="json")
    second_id = workspace.api_keys.get(name="second").pk
    assert [v["operation"] for v in _list(api, sid, api_key_id=second_id)["data"]] == ["modified"]
