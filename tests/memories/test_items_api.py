"""`/v1/memories`: CRUD, rules and errors (spec 003)."""

from __future__ import annotations

import pytest

from memories.models import MemoryItem, MemoryVersion
from tests.memories.helpers_items import error_type, make_item

pytestmark = pytest.mark.django_db

ITEM_KEYS = {
    "id",
    "scope",
    "scope_id",
    "type",
    "summary_tier",
    "content",
    "fact_key",
    "importance",
    "confidence",
    "source_floor_id",
    "source_message_id",
    "status",
    "lifecycle_status",
    "source_job_id",
    "token_count_estimate",
    "last_used_at",
    "coverage_start_floor_no",
    "coverage_end_floor_no",
    "derived_from_count",
    "created_at",
    "updated_at",
    "metadata",
}


def _create(api, **body):
    payload = {"scope": "chat", "scope_id": "conv-1", "type": "fact", "content": "likes tea"}
    payload.update(body)
    return api.post("/v1/memories", payload, format="json")


def test_create_returns_201_with_every_spec_field(api):
    response = _create(api, fact_key=" Drink ", content={"text": "喜欢咖啡"}, source_floor_id="floor-1")
    assert response.status_code == 201, response.json()
    item = response.json()["data"]
    assert set(item) >= ITEM_KEYS
    assert item["content"] == "喜欢咖啡" and item["fact_key"] == "drink"
    assert item["importance"] == 0.5 and item["confidence"] == 1.0
    assert item["status"] == "active" and item["lifecycle_status"] == "active"
    assert isinstance(item["created_at"], int) and item["created_at"] > 1_600_000_000_000
    assert item["last_used_at"] is None and item["version"] == 1
    assert MemoryVersion.objects.filter(memory_id=item["id"], operation="created", actor_type="api_key").exists()


def test_due_date_only_on_open_loops(api):
    loop = _create(api, type="open_loop", content="Renew the passport", due_date="2026-12-04").json()["data"]
    assert loop["due_date"] == "2026-12-04"
    changed = api.patch(f"/v1/memories/{loop['id']}", {"due_date": "2027-01-15"}, format="json").json()["data"]
    assert changed["due_date"] == "2027-01-15"
    assert api.get(f"/v1/memories/{loop['id']}").json()["data"]["due_date"] == "2027-01-15"
    versions = api.get(f"/v1/memories/{loop['id']}/versions").json()["data"]
    assert versions[0]["version"] == 2 and versions[0]["attributes"]["due_date"] == "2027-01-15"
    cleared = api.patch(f"/v1/memories/{loop['id']}", {"due_date": None}, format="json").json()["data"]
    assert cleared["due_date"] is None
    assert MemoryItem.objects.get(pk=loop["id"]).due_date is None
    # A version keeps the day: restoring the first brings it back.
    first = versions[-1]["id"]
    restored = api.post(f"/v1/memories/{loop['id']}/restore", {"version_id": first}, format="json").json()["data"]
    assert restored["due_date"] == "2026-12-04"
    fact = _create(api, due_date="2026-12-04").json()["data"]
    assert fact["due_date"] is None


def test_metadata_is_kept_versioned_and_filtered(api):
    crm = _create(api, content="Prefers email", metadata={"source": "crm", "priority": 2, "tags": ["a"]})
    assert crm.status_code == 201, crm.json()
    crm = crm.json()["data"]
    assert crm["metadata"] == {"source": "crm", "priority": 2, "tags": ["a"]}
    other = _create(api, content="Prefers phone calls", metadata={"source": "chat", "urgent": True}).json()["data"]
    plain = _create(api, content="Lives in Porto").json()["data"]
    assert plain["metadata"] == {}

    def listed(**params) -> list[str]:
        response = api.get("/v1/memories", {"scope": "chat", "scope_id": "conv-1", **params})
        assert response.status_code == 200, response.json()
        return sorted(row["id"] for row in response.json()["data"])

    assert listed(metadata='{"source": "crm"}') == [crm["id"]]
    assert listed(metadata='{"source": "crm", "priority": 2}') == [crm["id"]]
    assert listed(metadata='{"source": "crm", "priority": 3}') == []
    assert listed(metadata='{"urgent": true}') == [other["id"]]
    assert listed(metadata='{"key with spaces__and__underscores": "x"}') == []
    # A search by meaning takes the same filter.
    found = api.get("/v1/memories", {"scope": "chat", "scope_id": "conv-1", "query": "how to contact?",
                                     "metadata": '{"source": "chat"}'}).json()["data"]
    assert [row["id"] for row in found] in ([other["id"]], [])
    for bad in ("crm", "[1]", "{}", '{"source": null}', '{"tags": ["a"]}'):
        response = api.get("/v1/memories", {"metadata": bad})
        assert response.status_code == 400 and error_type(response) == "invalid_request_error", bad

    # An update replaces the object, writes a version; null clears it.
    changed = api.patch(f"/v1/memories/{crm['id']}", {"metadata": {"source": "erp"}}, format="json").json()["data"]
    assert changed["metadata"] == {"source": "erp"} and changed["version"] == 2
    assert MemoryItem.objects.get(pk=crm["id"]).metadata == {"source": "erp"}
    versions = api.get(f"/v1/memories/{crm['id']}/versions").json()["data"]
    assert [v["attributes"]["metadata"] for v in versions] == [{"source": "erp"},
                                                              {"source": "crm", "priority": 2, "tags": ["a"]}]
    assert api.patch(f"/v1/memories/{crm['id']}", {"metadata": None}, format="json").json()["data"]["metadata"] == {}


@pytest.mark.parametrize("metadata", ["crm", ["a"], {"": 1}, {"k" * 129: 1}, {f"k{i}": i for i in range(65)},
                                      {"blob": "x" * 17_000}])
def test_metadata_validation_errors_are_400(api, metadata):
    response = _create(api, metadata=metadata)
    assert response.status_code == 400 and error_type(response) == "invalid_request_error"
    assert not MemoryItem.objects.exists()


def test_summary_tier_only_on_summaries(api):
    fact = _create(api, summary_tier="micro").json()["data"]
    assert fact["summary_tier"] is None
    summary = _create(api, type="summary", summary_tier="macro", fact_key="x").json()["data"]
    assert summary["summary_tier"] == "macro" and summary["fact_key"] is None


@pytest.mark.parametrize(
    "body",
    [
        {"content": {"text": "a", "b": 1}},
        {"content": ["x"]},
        {"content": 42},
        {"content": "x" * 102_401},
        {"importance": 2},
        {"confidence": "high"},
        {"scope": "store"},
        {"type": "document"},
        {"type": "note"},
        {"scope": "branch", "scope_id": "conv-1"},
        {"summary_tier": "mega", "type": "summary"},
        {"unknown_field": 1},
        {"status": "archived"},
        {"type": "open_loop", "due_date": "Friday"},
        {"type": "open_loop", "due_date": "2026-02-30"},
        {"type": "open_loop", "due_date": 20261204},
    ],
)
def test_create_validation_errors_are_400(api, body):
    response = _create(api, **body)
    assert response.status_code == 400
    assert error_type(response) == "invalid_request_error"
    assert not MemoryItem.objects.exists()


def test_create_requires_core_fields_and_an_object(api):
    assert api.post("/v1/memories", {"scope": "chat"}, format="json").status_code == 400
    assert api.post("/v1/memories", ["x"], format="json").status_code == 400
    response = api.post("/v1/memories", "{bad json", content_type="application/json")
    assert response.status_code == 400


def test_illegal_status_combination_is_409(api):
    response = _create(api, status="deprecated", lifecycle_status="active")
    assert response.status_code == 409 and error_type(response) == "conflict_error"
    assert not MemoryItem.objects.exists()


def test_get_update_delete(api, workspace):
    item = make_item(workspace)
    got = api.get(f"/v1/memories/{item.pk}").json()["data"]
    assert got["id"] == item.pk and got["content"] == "likes tea"
    response = api.patch(f"/v1/memories/{item.pk}", {"content": "likes coffee", "importance": 0.9}, format="json")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["content"] == "likes coffee" and data["importance"] == 0.9 and data["version"] == 2
    assert data["updated_at"] >= got["updated_at"]
    response = api.delete(f"/v1/memories/{item.pk}")
    assert response.status_code == 200
    assert response.json() == {
        "data": {"id": item.pk, "deleted": True},
        "lineage": {"memories_deleted": 0, "memory_ids": [], "summaries_cleared": 0, "rederive_job_ids": []},
    }
    assert api.get(f"/v1/memories/{item.pk}").status_code == 404
    assert api.delete(f"/v1/memories/{item.pk}").status_code == 404


def test_patch_rules(api, workspace):
    item = make_item(workspace, type="summary", summary_tier="micro")
    response = api.patch(f"/v1/memories/{item.pk}", {}, format="json")
    assert response.status_code == 400
    response = api.patch(f"/v1/memories/{item.pk}", {"content": {"json": "object"}}, format="json")
    assert response.status_code == 400
    response = api.patch(f"/v1/memories/{item.pk}", {"version": 9}, format="json")
    assert response.status_code == 400
    data = api.patch(f"/v1/memories/{item.pk}", {"type": "fact", "fact_key": "City"}, format="json").json()["data"]
    assert data["summary_tier"] is None and data["fact_key"] == "city"
    data = api.patch(f"/v1/memories/{item.pk}", {"lifecycle_status": "deprecated"}, format="json").json()["data"]
    assert (data["status"], data["lifecycle_status"]) == ("active", "deprecated")
    data = api.patch(f"/v1/memories/{item.pk}", {"status": "deprecated"}, format="json").json()["data"]
    assert (data["status"], data["lifecycle_status"]) == ("deprecated", "deprecated")
    response = api.patch(
        f"/v1/memories/{item.pk}", {"status": "active", "lifecycle_status": "deprecated"}, format="json"
    )
    assert response.status_code == 409


def test_patch_preconditions(api, workspace):
    item = make_item(workspace)
    response = api.patch(f"/v1/memories/{item.pk}", {"content": "x", "expected_version": 5}, format="json")
    assert response.status_code == 409 and error_type(response) == "memory_precondition_failed"
    response = api.patch(f"/v1/memories/{item.pk}", {"content": "x", "expected_version": "one"}, format="json")
    assert response.status_code == 400
    response = api.patch(
        f"/v1/memories/{item.pk}",
        {"content": "x", "expected_version": 1, "expected_content_sha256": item.content_sha256},
        format="json",
    )
    assert response.status_code == 200 and response.json()["data"]["version"] == 2
    assert MemoryItem.objects.get(pk=item.pk).content == "x"


def test_store_documents_are_not_edited_here(api, workspace):
    item = make_item(workspace)
    MemoryItem.objects.filter(pk=item.pk).update(scope="store", type="document", path="/a.md")
    assert api.get(f"/v1/memories/{item.pk}").json()["data"]["path"] == "/a.md"
    response = api.patch(f"/v1/memories/{item.pk}", {"importance": 0.1}, format="json")
    assert response.status_code == 409


def test_other_workspace_answers_404(api, other_api, workspace):
    item = make_item(workspace)
    assert other_api.get(f"/v1/memories/{item.pk}").status_code == 404
    assert other_api.patch(f"/v1/memories/{item.pk}", {"importance": 0.1}, format="json").status_code == 404
    assert other_api.delete(f"/v1/memories/{item.pk}").status_code == 404
    assert other_api.get("/v1/memories").json()["meta"]["total"] == 0
    assert MemoryItem.objects.get(pk=item.pk).importance == 0.5


def test_read_only_key_reads_but_cannot_write(readonly_api, workspace):
    item = make_item(workspace)
    assert readonly_api.get("/v1/memories").status_code == 200
    assert readonly_api.get(f"/v1/memories/{item.pk}").status_code == 200
    assert readonly_api.get("/v1/memories/stats").status_code == 200
    for response in (
        _create(readonly_api),
        readonly_api.patch(f"/v1/memories/{item.pk}", {"importance": 0.1}, format="json"),
        readonly_api.delete(f"/v1/memories/{item.pk}"),
        readonly_api.patch("/v1/memories/batch/status", {"ids": [item.pk], "status": "deprecated"}, format="json"),
        readonly_api.post("/v1/memories/batch/delete", {"ids": [item.pk]}, format="json"),
    ):
        assert response.status_code == 403 and error_type(response) == "permission_error"
    assert MemoryItem.objects.get(pk=item.pk).version == 1


def test_anonymous_is_401(anon_api):
    assert anon_api.get("/v1/memories").status_code == 401


def test_batch_status(api, workspace, other_workspace):
    mine = [make_item(workspace, content=f"m{i}") for i in range(3)]
    foreign = make_item(other_workspace)
    ids = [mine[0].pk, mine[1].pk, foreign.pk, "mem_nope"]
    response = api.patch("/v1/memories/batch/status", {"ids": ids, "status": "deprecated"}, format="json")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["meta"] == {"total": 4, "updated": 2, "not_found": 2, "status": "deprecated"}
    assert [r["id"] for r in data["results"]] == ids
    assert [r["result"] for r in data["results"]] == ["updated", "updated", "not_found", "not_found"]
    assert MemoryItem.objects.get(pk=mine[0].pk).lifecycle_status == "deprecated"
    assert MemoryItem.objects.get(pk=foreign.pk).status == "active"
    assert MemoryVersion.objects.filter(memory_id=mine[0].pk, operation="modified").count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {"ids": [], "status": "active"},
        {"ids": ["a", "a"], "status": "active"},
        {"ids": [f"mem_{i}" for i in range(101)], "status": "active"},
        {"ids": ["a"], "status": "compacted"},
        {"ids": "a", "status": "active"},
        {"status": "active"},
    ],
)
def test_batch_status_bad_requests(api, body):
    response = api.patch("/v1/memories/batch/status", body, format="json")
    assert response.status_code == 400


def test_batch_status_accepts_100(api, workspace):
    items = [make_item(workspace, content=f"m{i}") for i in range(100)]
    response = api.patch(
        "/v1/memories/batch/status", {"ids": [i.pk for i in items], "status": "deprecated"}, format="json"
    )
    assert response.json()["data"]["meta"]["updated"] == 100
    assert MemoryItem.objects.filter(status="deprecated").count() == 100
    assert MemoryVersion.objects.filter(operation="modified").count() == 100


def test_batch_delete(api, workspace, other_workspace):
    mine = [make_item(workspace, content=f"m{i}") for i in range(2)]
    foreign = make_item(other_workspace)
    ids = [mine[0].pk, foreign.pk, mine[1].pk]
    response = api.post("/v1/memories/batch/delete", {"ids": ids}, format="json")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["meta"] == {"total": 3, "deleted": 2, "not_found": 1}
    assert [r["result"] for r in data["results"]] == ["deleted", "not_found", "deleted"]
    assert list(MemoryItem.objects.values_list("pk", flat=True)) == [foreign.pk]
    assert MemoryVersion.objects.filter(operation="deleted").count() == 2
    for body in ({"ids": []}, {"ids": ["x", "x"]}, {"ids": [str(i) for i in range(101)]}, {}):
        assert api.post("/v1/memories/batch/delete", body, format="json").status_code == 400


def test_stats(api, workspace):
    make_item(workspace, importance=0.2, confidence=0.4, content="abcd")
    make_item(workspace, type="summary", summary_tier="micro", importance=0.8, confidence=1.0, content="abcdefgh")
    make_item(workspace, type="open_loop", status="deprecated", importance=0.5)
    make_item(workspace, scope="global", scope_id="", lifecycle_status="pending")
    response = api.get("/v1/memories/stats")
    assert response.status_code == 200
    data = response.json()["data"]
    # The memory awaiting review counts as pending, never as active.
    assert data["total"] == 4 and data["active"] == 2 and data["deprecated"] == 1 and data["pending"] == 1
    assert data["by_type"] == {"fact": 2, "summary": 1, "open_loop": 1}
    assert data["by_lifecycle_status"] == {"pending": 1, "active": 2, "compacted": 0, "deprecated": 1}
    assert data["avg_importance"] == pytest.approx((0.2 + 0.8 + 0.5 + 0.5) / 4)
    assert data["estimated_tokens"] == 1 + 2 + 3 + 3
    filtered = api.get("/v1/memories/stats", {"type": "summary", "summary_tier": "micro"}).json()["data"]
    assert filtered["total"] == 1 and filtered["avg_confidence"] == 1.0
    empty = api.get("/v1/memories/stats", {"lifecycle_status": "compacted"}).json()["data"]
    assert empty["total"] == 0 and empty["avg_importance"] == 0
    assert api.get("/v1/memories/stats", {"importance_min": "x"}).status_code == 400


def test_put_is_not_allowed(api, workspace):
    item = make_item(workspace)
    assert api.put(f"/v1/memories/{item.pk}", {"content": "x"}, format="json").status_code == 405
