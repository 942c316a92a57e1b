"""Substring search (`q`) in any language, and relevance ranking."""

from __future__ import annotations

import pytest
from django.db import connection

from memories.models import MemoryItem
from memories.search import FTS_TABLE, search_filter, search_rank, sqlite_index_ensure
from memories.services.items import memory_item_delete, memory_item_update
from tests.memories.helpers_items import AGENT, make_item

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(workspace):
    return {
        "coffee": make_item(workspace, content="用户喜欢喝咖啡,每天早上一杯拿铁"),
        "tea": make_item(workspace, content="用户不喝茶"),
        "paris": make_item(workspace, content="Lives in Paris, France"),
        "quote": make_item(workspace, content='He said "100% sure_thing" yesterday'),
        "keyed": make_item(workspace, content="prefers window seats", fact_key="Seat Preference"),
        "emoji": make_item(workspace, content="最喜欢的表情是🙂和🎉"),
    }


def _q(api, q: str) -> set[str]:
    response = api.get("/v1/memories", {"q": q})
    assert response.status_code == 200, response.json()
    return {row["id"] for row in response.json()["data"]}


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("咖啡", {"coffee"}),  # two characters: below a trigram, LIKE fallback
        ("喝咖啡", {"coffee"}),
        ("拿铁", {"coffee"}),
        ("用户", {"coffee", "tea"}),
        ("喝", {"coffee", "tea"}),
        ("paris", {"paris"}),
        ("PARIS, fr", {"paris"}),
        ("in Par", {"paris"}),
        ('"100% sure', {"quote"}),
        ("100%", {"quote"}),
        ("sure_thing", {"quote"}),
        ("_", {"quote"}),
        ("%", {"quote"}),
        ("seat pref", {"keyed"}),
        ("🙂和🎉", {"emoji"}),
        ("nothing like this", set()),
        ("咖啡因", set()),
    ],
)
def test_q_finds_substrings(api, corpus, q, expected):
    assert _q(api, q) == {corpus[key].pk for key in expected}


def test_index_follows_updates_and_deletes(api, workspace, corpus):
    item = corpus["coffee"]
    memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"content": "现在改喝绿茶了"})
    assert _q(api, "拿铁") == set()
    assert _q(api, "喝绿茶") == {item.pk}
    memory_item_delete(workspace=workspace, actor=AGENT, memory_id=item.pk)
    assert _q(api, "喝绿茶") == set()


def test_q_is_scoped_to_the_workspace(other_api, corpus):
    assert _q(other_api, "咖啡") == set()
    assert _q(other_api, "Paris") == set()


def test_search_filter_and_rank_as_functions(workspace, corpus):
    queryset = MemoryItem.objects.filter(workspace=workspace)
    assert set(search_filter(queryset, "喜欢").values_list("pk", flat=True)) == {
        corpus["coffee"].pk,
        corpus["emoji"].pk,
    }
    assert search_filter(queryset, "").count() == queryset.count()
    ranked = list(
        search_rank(queryset, "我每天早上都想喝一杯咖啡").order_by("-relevance").values_list("pk", "relevance")
    )
    assert ranked[0][0] == corpus["coffee"].pk
    scores = dict(ranked)
    assert scores[corpus["coffee"].pk] > scores[corpus["paris"].pk]
    assert scores[corpus["paris"].pk] == pytest.approx(0.0, abs=1e-9)
    short = dict(search_rank(queryset, "茶").values_list("pk", "relevance"))
    assert short[corpus["tea"].pk] > short[corpus["paris"].pk]
    blank = search_rank(queryset, "  ").values_list("relevance", flat=True)
    assert set(blank) == {0.0}


def test_sqlite_index_heals_after_a_table_rebuild(api, corpus):
    if connection.vendor != "sqlite":
        pytest.skip("SQLite FTS5 index")
    with connection.cursor() as cursor:
        for suffix in ("ai", "ad", "au"):
            cursor.execute(f"DROP TRIGGER {FTS_TABLE}_{suffix}")
        # Writes while the triggers are gone are invisible to the index...
        cursor.execute(
            "UPDATE memories_memoryitem SET content = 'unindexed words here' WHERE id = %s", [corpus["tea"].pk]
        )
    assert _q(api, "unindexed") == set()
    # ...until the post-migrate hook puts the triggers back and rebuilds.
    assert sqlite_index_ensure(connection) is True
    assert _q(api, "unindexed") == {corpus["tea"].pk}
    assert sqlite_index_ensure(connection) is False


@pytest.mark.postgres
def test_postgres_q_uses_the_trigram_index(workspace, corpus):
    # Without the workspace condition, so the tiny table's workspace index is no
    # alternative; seqscans are off because the planner prefers them on tiny tables.
    queryset = search_filter(MemoryItem.objects.all(), "咖啡拿铁")
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        sql, params = queryset.query.sql_with_params()
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "mem_content_trgm" in plan, plan
    assert "mem_fact_key_trgm" in plan, plan
