"""`/v1/memory_edges` (spec 003)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from memories.models import MemoryEdge, MemoryItem
from memories.services.edges import memory_edge_create
from memory_project.errors import EdgeConflictError
from tests.memories.helpers_items import error_type, make_item

pytestmark = pytest.mark.django_db


@pytest.fixture
def trio(workspace):
    return [make_item(workspace, content=f"memory {i}") for i in range(3)]


def _create(api, from_id, to_id, relation="supports"):
    return api.post("/v1/memory_edges", {"from_id": from_id, "to_id": to_id, "relation": relation}, format="json")


@pytest.mark.parametrize("relation", ["supports", "contradicts", "updates", "derived_from", "compacts", "resolves"])
def test_create_each_relation(api, trio, relation):
    response = _create(api, trio[0].pk, trio[1].pk, relation)
    assert response.status_code == 201, response.json()
    edge = response.json()["data"]
    assert set(edge) == {"id", "from_id", "to_id", "relation", "created_at"}
    assert edge["from_id"] == trio[0].pk and edge["relation"] == relation
    assert isinstance(edge["created_at"], int)


def test_duplicate_is_409_memory_edge_conflict(api, trio):
    assert _create(api, trio[0].pk, trio[1].pk).status_code == 201
    response = _create(api, trio[0].pk, trio[1].pk)
    assert response.status_code == 409 and error_type(response) == "memory_edge_conflict"
    # Another relation, or the reverse direction, is a different edge.
    assert _create(api, trio[0].pk, trio[1].pk, "updates").status_code == 201
    assert _create(api, trio[1].pk, trio[0].pk).status_code == 201
    assert MemoryEdge.objects.count() == 3


@pytest.mark.parametrize(
    "body",
    [
        {"relation": "supports"},
        {"from_id": "a", "to_id": "b", "relation": "likes"},
        {"from_id": "a", "to_id": "b"},
        {"from_id": "a", "to_id": "b", "relation": "supports", "weight": 1},
    ],
)
def test_bad_bodies_are_400(api, body):
    assert api.post("/v1/memory_edges", body, format="json").status_code == 400


def test_self_loop_is_400(api, trio):
    assert _create(api, trio[0].pk, trio[0].pk).status_code == 400


def test_ends_must_be_in_the_workspace(api, trio, other_workspace):
    foreign = make_item(other_workspace)
    assert _create(api, trio[0].pk, foreign.pk).status_code == 404
    assert _create(api, foreign.pk, trio[0].pk).status_code == 404
    assert _create(api, trio[0].pk, "mem_missing").status_code == 404
    assert not MemoryEdge.objects.exists()


def test_get_patch_delete(api, other_api, trio):
    edge = _create(api, trio[0].pk, trio[1].pk).json()["data"]
    assert api.get(f"/v1/memory_edges/{edge['id']}").json()["data"] == edge
    assert other_api.get(f"/v1/memory_edges/{edge['id']}").status_code == 404
    assert other_api.patch(f"/v1/memory_edges/{edge['id']}", {"relation": "updates"}, format="json").status_code == 404
    assert other_api.delete(f"/v1/memory_edges/{edge['id']}").status_code == 404
    response = api.patch(f"/v1/memory_edges/{edge['id']}", {"relation": "updates"}, format="json")
    assert response.status_code == 200 and response.json()["data"]["relation"] == "updates"
    assert api.patch(f"/v1/memory_edges/{edge['id']}", {"relation": "bogus"}, format="json").status_code == 400
    assert api.patch(f"/v1/memory_edges/{edge['id']}", {}, format="json").status_code == 400
    assert (
        api.patch(
            f"/v1/memory_edges/{edge['id']}", {"relation": "supports", "from_id": trio[2].pk}, format="json"
        ).status_code
        == 400
    )
    response = api.delete(f"/v1/memory_edges/{edge['id']}")
    assert response.json() == {"data": {"id": edge["id"], "deleted": True}}
    assert api.get(f"/v1/memory_edges/{edge['id']}").status_code == 404
    assert api.delete(f"/v1/memory_edges/{edge['id']}").status_code == 404


def test_patch_onto_existing_edge_is_409(api, trio):
    _create(api, trio[0].pk, trio[1].pk, "supports")
    other = _create(api, trio[0].pk, trio[1].pk, "updates").json()["data"]
    response = api.patch(f"/v1/memory_edges/{other['id']}", {"relation": "supports"}, format="json")
    assert response.status_code == 409 and error_type(response) == "memory_edge_conflict"
    assert MemoryEdge.objects.get(pk=other["id"]).relation == "updates"


def test_list_filters_sort_and_paging(api, trio, django_assert_max_num_queries):
    a = _create(api, trio[0].pk, trio[1].pk, "supports").json()["data"]
    b = _create(api, trio[1].pk, trio[2].pk, "updates").json()["data"]
    c = _create(api, trio[0].pk, trio[2].pk, "updates").json()["data"]
    with django_assert_max_num_queries(6):
        listed = api.get("/v1/memory_edges").json()
    assert [e["id"] for e in listed["data"]] == [c["id"], b["id"], a["id"]]
    assert listed["meta"] == {"total": 3, "limit": 20, "offset": 0, "has_more": False, "total_exact": True}

    def ids(params):
        response = api.get("/v1/memory_edges", params)
        assert response.status_code == 200
        return [e["id"] for e in response.json()["data"]]

    assert ids({"from_id": trio[0].pk, "sort_order": "asc"}) == [a["id"], c["id"]]
    assert ids({"to_id": trio[2].pk, "relation": "updates", "sort_by": "created_at", "sort_order": "asc"}) == [
        b["id"],
        c["id"],
    ]
    assert ids({"limit": 1, "offset": 1}) == [b["id"]]
    for bad in ({"relation": "x"}, {"sort_by": "relation"}, {"sort_order": "up"}, {"limit": "0"}):
        assert api.get("/v1/memory_edges", bad).status_code == 400


def test_deleting_an_item_removes_its_edges(api, trio):
    _create(api, trio[0].pk, trio[1].pk)
    api.delete(f"/v1/memories/{trio[1].pk}")
    assert not MemoryEdge.objects.exists()
    assert MemoryItem.objects.count() == 2


def test_read_only_key_cannot_write_edges(readonly_api, trio):
    assert readonly_api.get("/v1/memory_edges").status_code == 200
    assert _create(readonly_api, trio[0].pk, trio[1].pk).status_code == 403


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicate_creates_yield_one_edge(workspace):
    first, second = make_item(workspace, content="a"), make_item(workspace, content="b")
    outcomes: list[str] = []
    barrier = threading.Barrier(4)

    def create() -> None:
        barrier.wait()
        try:
            memory_edge_create(workspace=workspace, from_id=first.pk, to_id=second.pk, relation="supports")
            outcomes.append("created")
        except EdgeConflictError:
            outcomes.append("conflict")
        finally:
            connection.close()

    threads = [threading.Thread(target=create) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict", "conflict", "conflict", "created"]
    assert MemoryEdge.objects.count() == 1
