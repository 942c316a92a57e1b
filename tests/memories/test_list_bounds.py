"""Memory lists cost what their page costs, whatever the table holds: `total`
is counted only a bounded distance past the page, a `q` list counts nothing,
and a search beside a selective filter is checked on that filter's rows."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories import search
from memories.models import MemoryItem
from memories.views import items as item_views
from memory_client import MemoryClient
from tests.memories.helpers_items import make_item

pytestmark = pytest.mark.django_db


@pytest.fixture
def ten(workspace):
    return [make_item(workspace, content=f"note {n} about tea", scope_id=f"conv-{n % 2}") for n in range(10)]


def test_total_is_exact_up_to_a_bound_past_the_page(api, ten, monkeypatch):
    monkeypatch.setattr(item_views, "TOTAL_COUNT_AHEAD", 3)
    first = api.get("/v1/memories", {"limit": 2}).json()["meta"]
    assert first == {"total": 5, "limit": 2, "offset": 0, "has_more": True, "total_exact": False}
    deep = api.get("/v1/memories", {"limit": 2, "offset": 6}).json()["meta"]
    assert deep == {"total": 10, "limit": 2, "offset": 6, "has_more": True, "total_exact": True}


def test_a_search_list_counts_nothing_and_reports_a_lower_bound(api, ten):
    with CaptureQueriesContext(connection) as ctx:
        body = api.get("/v1/memories", {"q": "about tea", "limit": 4}).json()
    counts = [q["sql"] for q in ctx.captured_queries if "COUNT(" in q["sql"].upper()]
    # At most a bounded probe of the search index (SQLite), never a count of the matching memories.
    assert all("FROM memories_memoryitem_fts WHERE" in sql and "LIMIT" in sql for sql in counts), counts
    assert len(body["data"]) == 4
    assert body["meta"] == {"total": 5, "limit": 4, "offset": 0, "has_more": True, "total_exact": False}
    last = api.get("/v1/memories", {"q": "about tea", "limit": 4, "offset": 8}).json()
    assert last["meta"] == {"total": 10, "limit": 4, "offset": 8, "has_more": False, "total_exact": True}


@pytest.mark.parametrize("offset", [10, 12, 400])
def test_a_search_list_past_its_last_row_claims_no_rows_that_do_not_exist(api, workspace, ten, offset):
    for n in range(3):
        make_item(workspace, content=f"note {n} about coffee")  # not matched: not counted
    with CaptureQueriesContext(connection) as ctx:
        body = api.get("/v1/memories", {"q": "about tea", "limit": 4, "offset": offset}).json()
    assert body["data"] == []
    assert body["meta"] == {"total": 10, "limit": 4, "offset": offset, "has_more": False, "total_exact": True}
    # The rows before the offset are counted, no further than the offset.
    counts = [q["sql"] for q in ctx.captured_queries if "COUNT(" in q["sql"].upper() and f"LIMIT {offset}" in q["sql"]]
    assert counts, [q["sql"] for q in ctx.captured_queries]


def test_offset_clients_still_see_every_row(live_server, workspace, ten):
    from tests.factories import make_api_key

    with MemoryClient(live_server.url, make_api_key(workspace)) as client:
        found = list(client.iter_memories(q="about tea", page_size=3))
    assert sorted(item["id"] for item in found) == sorted(item.pk for item in ten)


def _search_sql(queryset) -> str:
    return str(queryset.query)


@pytest.mark.skipif("connection.vendor != 'sqlite'")
def test_sqlite_search_is_driven_by_the_selective_filter(api, ten):
    queryset = MemoryItem.objects.all()
    # Rare or common, without a selective filter: the matches are read from the index once.
    assert "rowid IN (SELECT rowid" in _search_sql(search.search_filter(queryset, "note 3 about"))
    assert "rowid IN (SELECT rowid" in _search_sql(search.search_filter(queryset, "about tea"))
    # Beside a scope id: checked on that scope's rows only.
    driven = search.search_filter(queryset.filter(scope_id="conv-1"), "note 3 about", selective_filter=True)
    assert "EXISTS (SELECT 1" in _search_sql(driven)
    assert [item.content for item in driven] == ["note 3 about tea"]
    with CaptureQueriesContext(connection) as ctx:
        body = api.get("/v1/memories", {"q": "about tea", "scope": "chat", "scope_id": "conv-1"}).json()
    assert sorted(item["content"] for item in body["data"]) == sorted(f"note {n} about tea" for n in range(1, 10, 2))
    listing = [q["sql"] for q in ctx.captured_queries if "memories_memoryitem_fts" in q["sql"]]
    assert listing and all("EXISTS (SELECT 1" in sql for sql in listing)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + listing[-1].replace("%s", "?"))
        plan = " ".join(str(row) for row in cursor.fetchall())
    # Read through one of the indexes that lead with the scope.
    assert "mem_ws_scope_created" in plan or "mem_ws_scope_importance" in plan, plan


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_postgres_reads_a_scope_page_off_its_index(workspace):
    rows = [
        MemoryItem(workspace=workspace, scope="chat", scope_id=f"conv-{n % 200}", type="fact",
                   content=f"memory {n}", content_sha256=f"{n:064x}", content_size_bytes=10)
        for n in range(4000)
    ]
    MemoryItem.objects.bulk_create(rows)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memoryitem")
    from memories.selectors.items import memory_item_list

    queryset = memory_item_list(workspace=workspace, filters={"scope": "chat", "scope_id": "conv-7"})[:20]
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "mem_ws_scope_created" in plan and "Sort" not in plan, plan
