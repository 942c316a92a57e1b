"""A LangGraph store batch of many searches reads and decodes each item once,
not once per search, and answers exactly as one search per batch would."""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from framework_state.services import store_search
from framework_state.services.store import store_batch

pytestmark = pytest.mark.django_db
ACTOR = Actor.for_api_key("apikey_test")
ITEMS = 200
SEARCHES = 300


def _put(i: int) -> dict:
    return {"op": "put", "namespace": ["users", f"u{i % 4}"], "key": f"k{i}", "value": {"n": i, "text": f"likes item {i}"}}


def _searches() -> list[dict]:
    ops = []
    for i in range(SEARCHES):
        op = {"op": "search", "namespace_prefix": ["users"] if i % 2 else [], "limit": 5, "offset": i % 7}
        if i % 3 == 0:
            op["filter"] = {"n": {"$gte": i % ITEMS}}
        if i % 5 == 0:
            op["query"] = f"item {i % 50}"
        ops.append(op)
    return ops


def test_many_searches_cost_one_read_per_prefix(workspace, monkeypatch, django_assert_max_num_queries):
    for start in range(0, ITEMS, 100):
        store_batch(workspace=workspace, store_id=None, ops=[_put(i) for i in range(start, start + 100)], actor=ACTOR,
                    read_only=False)
    searches = _searches()
    one_by_one = [store_batch(workspace=workspace, store_id=None, ops=[op], actor=ACTOR, read_only=False)[0]
                  for op in searches]
    decoded = []
    real = store_search.decode_value
    monkeypatch.setattr(store_search, "decode_value", lambda item: decoded.append(item.pk) or real(item))
    # Two prefixes: two reads of the items (plus the store lookup), whatever the number of searches.
    with django_assert_max_num_queries(8):
        together = store_batch(workspace=workspace, store_id=None, ops=searches, actor=ACTOR, read_only=False)
    assert together == one_by_one
    assert len(decoded) == 2 * ITEMS
    assert sum(1 for result in together if result) > SEARCHES // 2


def test_a_put_between_searches_is_seen(workspace):
    ops = [
        _put(1),
        {"op": "search", "namespace_prefix": ["users"]},
        _put(2),
        {"op": "search", "namespace_prefix": ["users"]},
        {**_put(1), "value": None},
        {"op": "search", "namespace_prefix": ["users"]},
    ]
    results = store_batch(workspace=workspace, store_id=None, ops=ops, actor=ACTOR, read_only=False)
    assert [[item["key"] for item in results[i]] for i in (1, 3, 5)] == [["k1"], ["k2", "k1"], ["k2"]]


def test_searches_push_a_ttl_forward_once(workspace, django_assert_max_num_queries):
    from datetime import timedelta

    from django.utils import timezone

    from memories.models import MemoryItem

    store_batch(workspace=workspace, store_id=None, ops=[{**_put(1), "ttl": 60}, _put(2)], actor=ACTOR, read_only=False)
    soon = timezone.now() + timedelta(seconds=5)
    MemoryItem.objects.filter(path="/users/u1/k1").update(expires_at=soon)
    searches = [{"op": "search", "namespace_prefix": ["users"]}] * 20
    with django_assert_max_num_queries(4):
        store_batch(workspace=workspace, store_id=None, ops=searches, actor=ACTOR, read_only=False)
    expires = MemoryItem.objects.get(path="/users/u1/k1").expires_at
    assert expires > timezone.now() + timedelta(minutes=59)
    assert MemoryItem.objects.get(path="/users/u2/k2").expires_at is None
