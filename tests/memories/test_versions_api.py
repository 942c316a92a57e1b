"""Item version history, restore, redaction endpoints and retention."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.actors import Actor
from memories.models import MemoryItem, MemoryVersion
from memories.services.items import memory_item_delete, memory_item_update
from memories.services.versioning import versions_purge_expired
from tests.memories.helpers_items import AGENT, error_type, make_item

pytestmark = pytest.mark.django_db


def _history(workspace):
    item = make_item(workspace, content="v1")
    memory_item_update(
        workspace=workspace,
        actor=Actor.for_api_key("apikey_a", session_id="sess-1"),
        memory_id=item.pk,
        changes={"content": "v2"},
    )
    memory_item_update(
        workspace=workspace, actor=Actor.for_job("job_1"), memory_id=item.pk, changes={"importance": 0.9}
    )
    return item


def test_versions_newest_first_with_actors(api, workspace):
    item = _history(workspace)
    response = api.get(f"/v1/memories/{item.pk}/versions")
    assert response.status_code == 200
    body = response.json()
    assert body["meta"] == {"total": 3, "limit": 20, "offset": 0, "has_more": False, "total_exact": True}
    versions = body["data"]
    assert [v["version"] for v in versions] == [3, 2, 1]
    assert [v["operation"] for v in versions] == ["modified", "modified", "created"]
    assert versions[0]["created_by"] == {"type": "job_actor", "job_id": "job_1"}
    assert versions[1]["created_by"] == {"type": "session_actor", "session_id": "sess-1"}
    assert versions[2]["content"] == "v1" and versions[2]["attributes"]["importance"] == 0.5
    assert isinstance(versions[0]["created_at"], int)
    single = api.get(f"/v1/memories/{item.pk}/versions/{versions[2]['id']}").json()["data"]
    assert single == versions[2]


def test_version_filters(api, workspace):
    item = _history(workspace)
    base = f"/v1/memories/{item.pk}/versions"

    def versions(params):
        response = api.get(base, params)
        assert response.status_code == 200, response.json()
        return [v["version"] for v in response.json()["data"]]

    assert versions({"operation": "created"}) == [1]
    assert versions({"session_id": "sess-1"}) == [2]
    assert versions({"api_key_id": "apikey_a"}) == [2]
    assert versions({"job_id": "job_1"}) == [3]
    first = MemoryVersion.objects.get(memory_id=item.pk, version=1)
    ms = int(first.created_at.timestamp() * 1000)
    assert 1 in versions({"created_at_gte": ms, "created_at_lte": ms + 60_000})
    assert versions({"created_at_lte": ms - 1}) == []
    for bad in ({"operation": "x"}, {"created_at_gte": "soon"}, {"limit": "1000"}):
        assert api.get(base, bad).status_code == 400


def test_versions_survive_deletion_and_stay_private(api, other_api, workspace):
    item = _history(workspace)
    api.delete(f"/v1/memories/{item.pk}")
    versions = api.get(f"/v1/memories/{item.pk}/versions").json()["data"]
    assert versions[0]["operation"] == "deleted" and versions[0]["content"] is None and versions[0]["version"] == 4
    assert other_api.get(f"/v1/memories/{item.pk}/versions").status_code == 404
    assert api.get("/v1/memories/mem_unknown/versions").status_code == 404
    assert other_api.get(f"/v1/memories/{item.pk}/versions/{versions[0]['id']}").status_code == 404


def test_restore_live_and_deleted(api, workspace):
    item = _history(workspace)
    first = MemoryVersion.objects.get(memory_id=item.pk, version=1)
    response = api.post(f"/v1/memories/{item.pk}/restore", {"version_id": first.pk}, format="json")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["content"] == "v1" and data["importance"] == 0.5 and data["version"] == 4
    api.delete(f"/v1/memories/{item.pk}")
    v2 = MemoryVersion.objects.get(memory_id=item.pk, version=2)
    data = api.post(f"/v1/memories/{item.pk}/restore", {"version_id": v2.pk}, format="json").json()["data"]
    assert data["id"] == item.pk and data["content"] == "v2" and data["version"] == 6
    assert api.get(f"/v1/memories/{item.pk}").status_code == 200
    assert MemoryVersion.objects.get(memory_id=item.pk, version=6).operation == "created"


def test_restore_errors(api, other_api, workspace):
    item = _history(workspace)
    v1 = MemoryVersion.objects.get(memory_id=item.pk, version=1)
    assert api.post(f"/v1/memories/{item.pk}/restore", {}, format="json").status_code == 400
    assert api.post(f"/v1/memories/{item.pk}/restore", {"version_id": "memver_x"}, format="json").status_code == 404
    assert other_api.post(f"/v1/memories/{item.pk}/restore", {"version_id": v1.pk}, format="json").status_code == 404
    other_item = make_item(workspace, content="other")
    other_v = MemoryVersion.objects.get(memory_id=other_item.pk)
    assert api.post(f"/v1/memories/{item.pk}/restore", {"version_id": other_v.pk}, format="json").status_code == 404
    # A redacted version cannot be restored.
    assert api.post(f"/v1/memories/{item.pk}/versions/{v1.pk}/redact").status_code == 200
    response = api.post(f"/v1/memories/{item.pk}/restore", {"version_id": v1.pk}, format="json")
    assert response.status_code == 409 and error_type(response) == "conflict_error"


def test_redact_endpoint(api, other_api, readonly_api, workspace):
    item = _history(workspace)
    v1 = MemoryVersion.objects.get(memory_id=item.pk, version=1)
    head = MemoryVersion.objects.get(memory_id=item.pk, version=3)
    assert readonly_api.post(f"/v1/memories/{item.pk}/versions/{v1.pk}/redact").status_code == 403
    assert other_api.post(f"/v1/memories/{item.pk}/versions/{v1.pk}/redact").status_code == 404
    assert api.post(f"/v1/memories/{item.pk}/versions/{head.pk}/redact").status_code == 409
    response = api.post(f"/v1/memories/{item.pk}/versions/{v1.pk}/redact")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["redacted"] is True and data["content"] is None and data["content_sha256"] is None
    assert data["content_size_bytes"] is None and data["path"] is None
    assert data["created_by"] == {"type": "api_actor", "api_key_id": "apikey_test"}
    assert data["redacted_by"]["type"] == "api_actor" and isinstance(data["redacted_at"], int)
    stored = MemoryVersion.objects.get(pk=v1.pk)
    assert stored.content is None and stored.actor_type == "api_key" and stored.created_at == v1.created_at
    # Idempotent.
    assert api.post(f"/v1/memories/{item.pk}/versions/{v1.pk}/redact").status_code == 200


def test_retention_purges_versions_of_long_deleted_memories(workspace, settings):
    settings.MEMORY_VERSION_RETENTION_DAYS = 30
    old_gone = make_item(workspace, content="old")
    recent_gone = make_item(workspace, content="recent")
    live = make_item(workspace, content="live")
    memory_item_delete(workspace=workspace, actor=AGENT, memory_id=old_gone.pk)
    memory_item_delete(workspace=workspace, actor=AGENT, memory_id=recent_gone.pk)
    long_ago = timezone.now() - timedelta(days=31)
    MemoryVersion.objects.filter(memory_id__in=[old_gone.pk, live.pk]).update(created_at=long_ago)
    assert versions_purge_expired() == 2
    assert not MemoryVersion.objects.filter(memory_id=old_gone.pk).exists()
    assert MemoryVersion.objects.filter(memory_id=recent_gone.pk).count() == 2
    assert MemoryVersion.objects.filter(memory_id=live.pk).count() == 1
    assert versions_purge_expired(now=timezone.now() + timedelta(days=31)) == 2
    assert MemoryItem.objects.filter(pk=live.pk).exists()
    settings.MEMORY_VERSION_RETENTION_DAYS = 0
    memory_item_delete(workspace=workspace, actor=AGENT, memory_id=live.pk)
    assert versions_purge_expired(now=timezone.now() + timedelta(days=3650)) == 0
