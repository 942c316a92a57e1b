"""`GET /v1/memories` filters, sorting and paging (spec 003's query table)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memories.models import MemoryItem
from memories.services.items import memory_item_update
from tests.memories.helpers_items import AGENT, error_type, make_item

pytestmark = pytest.mark.django_db


def _ids(response) -> list[str]:
    assert response.status_code == 200, response.json()
    return [item["id"] for item in response.json()["data"]]


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


@pytest.fixture
def items(workspace):
    a = make_item(
        workspace,
        scope="chat",
        scope_id="conv-1",
        type="fact",
        fact_key="city",
        content="lives in Paris",
        importance=0.9,
        confidence=0.3,
        source_floor_id="f1",
        source_message_id="m1",
    )
    b = make_item(
        workspace,
        scope="branch",
        scope_id='["conv-1","main"]',
        type="summary",
        summary_tier="micro",
        content="talked about travel",
        importance=0.4,
        confidence=0.9,
    )
    c = make_item(
        workspace,
        scope="global",
        scope_id="",
        type="open_loop",
        content="book a hotel",
        importance=0.1,
        confidence=0.6,
        status="deprecated",
    )
    d = make_item(
        workspace,
        scope="branch",
        scope_id='["conv-1","main"]',
        type="summary",
        summary_tier="macro",
        content="long summary",
        importance=0.7,
        lifecycle_status="compacted",
    )
    # Spread creation and update times deterministically.
    base = datetime(2025, 1, 1, tzinfo=UTC)
    for offset, item in enumerate((a, b, c, d)):
        MemoryItem.objects.filter(pk=item.pk).update(
            created_at=base + timedelta(days=offset), updated_at=base + timedelta(days=10 - offset)
        )
    return {"a": a.pk, "b": b.pk, "c": c.pk, "d": d.pk, "base": base}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"scope": "branch"}, {"b", "d"}),
        ({"scope": "branch", "scope_id": '["conv-1","main"]'}, {"b", "d"}),
        ({"scope_id": "conv-1"}, {"a"}),
        ({"type": "summary"}, {"b", "d"}),
        ({"summary_tier": "macro"}, {"d"}),
        ({"status": "deprecated"}, {"c"}),
        ({"status": "active"}, {"a", "b", "d"}),
        ({"lifecycle_status": "compacted"}, {"d"}),
        ({"lifecycle_status": "deprecated"}, {"c"}),
        ({"fact_key": " CITY "}, {"a"}),
        ({"source_floor_id": "f1"}, {"a"}),
        ({"source_message_id": "m1"}, {"a"}),
        ({"importance_min": "0.4"}, {"a", "b", "d"}),
        ({"importance_max": "0.4"}, {"b", "c"}),
        ({"importance_min": "0.4", "importance_max": "0.7"}, {"b", "d"}),
        ({"confidence_min": "0.6", "confidence_max": "0.95"}, {"b", "c"}),
        ({"q": "PARIS"}, {"a"}),
        ({"q": "ho"}, {"c"}),
        ({"type": "summary", "importance_min": "0.5", "scope": "branch"}, {"d"}),
    ],
)
def test_filters(api, items, params, expected):
    assert set(_ids(api.get("/v1/memories", params))) == {items[key] for key in expected}


def test_time_ranges_are_ms_inclusive(api, items):
    base = items["base"]
    created = api.get(
        "/v1/memories", {"created_from": _ms(base + timedelta(days=1)), "created_to": _ms(base + timedelta(days=2))}
    )
    assert set(_ids(created)) == {items["b"], items["c"]}
    updated = api.get("/v1/memories", {"updated_from": _ms(base + timedelta(days=9))})
    assert set(_ids(updated)) == {items["a"], items["b"]}
    updated_to = api.get("/v1/memories", {"updated_to": _ms(base + timedelta(days=7))})
    assert set(_ids(updated_to)) == {items["d"]}


@pytest.mark.parametrize(
    ("sort_by", "sort_order", "expected"),
    [
        (None, None, ["d", "c", "b", "a"]),
        ("created_at", "asc", ["a", "b", "c", "d"]),
        ("updated_at", "desc", ["a", "b", "c", "d"]),
        ("importance", "desc", ["a", "d", "b", "c"]),
        ("confidence", "asc", ["a", "c", "b", "d"]),
    ],
)
def test_sorting(api, items, sort_by, sort_order, expected):
    params = {k: v for k, v in (("sort_by", sort_by), ("sort_order", sort_order)) if v}
    assert _ids(api.get("/v1/memories", params)) == [items[key] for key in expected]


def test_limit_offset_and_meta(api, items):
    response = api.get("/v1/memories", {"limit": 2, "offset": 1, "sort_order": "asc"})
    assert _ids(response) == [items["b"], items["c"]]
    assert response.json()["meta"] == {"total": 4, "limit": 2, "offset": 1, "has_more": True, "total_exact": True}
    beyond = api.get("/v1/memories", {"offset": 10})
    assert _ids(beyond) == [] and beyond.json()["meta"]["total"] == 4
    assert api.get("/v1/memories").json()["meta"] == {"total": 4, "limit": 20, "offset": 0, "has_more": False, "total_exact": True}


@pytest.mark.parametrize(
    "params",
    [
        {"scope": "galaxy"},
        {"type": "x"},
        {"summary_tier": "huge"},
        {"status": "gone"},
        {"lifecycle_status": "x"},
        {"created_from": "yesterday"},
        {"created_to": "-1"},
        {"updated_from": "1.5"},
        {"updated_to": str(10**20)},
        {"importance_min": "abc"},
        {"importance_max": "NaN"},
        {"confidence_min": "Infinity"},
        {"sort_by": "content"},
        {"sort_order": "sideways"},
        {"limit": "0"},
        {"limit": "101"},
        {"limit": "ten"},
        {"offset": "-1"},
        {"q": "x" * 1001},
    ],
)
def test_bad_filter_values_are_400(api, items, params):
    response = api.get("/v1/memories", params)
    assert response.status_code == 400, response.content
    assert error_type(response) == "invalid_request_error"


def test_store_documents_hidden_unless_asked(api, workspace, items):
    doc = make_item(workspace, content="store doc")
    MemoryItem.objects.filter(pk=doc.pk).update(scope="store", type="document", path="/notes.md")
    assert doc.pk not in _ids(api.get("/v1/memories"))
    assert _ids(api.get("/v1/memories", {"scope": "store"})) == [doc.pk]
    assert _ids(api.get("/v1/memories", {"type": "document"})) == [doc.pk]
    assert api.get("/v1/memories/stats").json()["data"]["total"] == 4


def test_list_query_count_is_constant(api, workspace, django_assert_max_num_queries):
    for index in range(30):
        make_item(workspace, content=f"memory number {index}", fact_key=f"k{index}")
    with django_assert_max_num_queries(6):
        response = api.get("/v1/memories", {"limit": 30, "q": "number", "importance_min": "0.1", "type": "fact"})
    assert len(response.json()["data"]) == 30


def test_last_used_and_updates_show_in_ms(api, workspace):
    item = make_item(workspace)
    moment = datetime(2025, 5, 1, 12, 0, 0, 123000, tzinfo=UTC)
    MemoryItem.objects.filter(pk=item.pk).update(last_used_at=moment)
    assert api.get(f"/v1/memories/{item.pk}").json()["data"]["last_used_at"] == _ms(moment)
    memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"importance": 0.3})
    data = api.get("/v1/memories", {"importance_max": "0.3"}).json()["data"]
    assert [row["id"] for row in data] == [item.pk]
