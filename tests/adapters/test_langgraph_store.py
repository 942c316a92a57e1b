"""A port of LangGraph's own store tests (`libs/checkpoint-sqlite/tests/test_store.py`:
batch order and ops, basic ops, namespaces, search and filters) plus TTL, run
against `langgraph_store` over the live server."""

from __future__ import annotations

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, Item, ListNamespacesOp, MatchCondition, PutOp, SearchOp


@pytest.fixture
def store(client):
    return client.langgraph_store


def test_batch_order(store):
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        [
            GetOp(namespace=("test", "foo"), key="key1"),
            PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
            SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            GetOp(namespace=("test",), key="key3"),
        ]
    )
    assert isinstance(results[0], Item) and results[0].value == {"data": "value1"}
    assert results[0].key == "key1" and results[0].namespace == ("test", "foo")
    assert results[1] is None
    assert [item.key for item in results[2]] == ["key1"]
    assert ("test", "foo") in results[3] and ("test", "bar") in results[3]
    assert results[4] is None

    reordered = store.batch(
        [
            SearchOp(namespace_prefix=("test",), filter=None, limit=5, offset=0),
            GetOp(namespace=("test", "bar"), key="key2"),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
            PutOp(namespace=("test",), key="key3", value={"data": "value3"}),
            GetOp(namespace=("test", "foo"), key="key1"),
        ]
    )
    assert len(reordered[0]) >= 2
    assert reordered[1].value == {"data": "value2"}
    assert reordered[3] is None
    assert reordered[4].value == {"data": "value1"}
    assert store.get(("test",), "key3").value == {"data": "value3"}


def test_batch_get_put_and_search_ops(store):
    assert store.batch(
        [
            PutOp(namespace=("test",), key="key1", value={"data": "value1"}),
            PutOp(namespace=("test",), key="key2", value={"data": "value2"}),
            PutOp(namespace=("test",), key="key3", value=None),
        ]
    ) == [None, None, None]
    got = store.batch([GetOp(("test",), "key1"), GetOp(("test",), "key2"), GetOp(("test",), "key3")])
    assert [g.key if g else None for g in got] == ["key1", "key2", None]

    for namespace, key, value in [
        (("s", "foo"), "key1", {"data": "value1", "tag": "a"}),
        (("s", "bar"), "key2", {"data": "value2", "tag": "a"}),
        (("s", "baz"), "key3", {"data": "value3", "tag": "b"}),
    ]:
        store.put(namespace, key, value)
    results = store.batch(
        [
            SearchOp(namespace_prefix=("s",), filter={"tag": "a"}, limit=10, offset=0),
            SearchOp(namespace_prefix=("s",), filter=None, limit=2, offset=0),
            SearchOp(namespace_prefix=("s", "foo"), filter=None, limit=10, offset=0),
        ]
    )
    assert len(results[0]) == 2 and all(item.value["tag"] == "a" for item in results[0])
    assert len(results[1]) == 2
    assert [item.namespace for item in results[2]] == [("s", "foo")]


def test_list_namespaces(store):
    namespaces = [
        ("test", "documents", "public"),
        ("test", "documents", "private"),
        ("test", "images", "public"),
        ("test", "images", "private"),
        ("prod", "documents", "public"),
        ("prod", "documents", "private"),
    ]
    for namespace in namespaces:
        store.put(namespace, "dummy", {"content": "dummy"})
    assert sorted(store.list_namespaces()) == sorted(namespaces)
    assert store.list_namespaces() == sorted(namespaces)
    prefixed = store.list_namespaces(prefix=["test"])
    assert len(prefixed) == 4 and all(ns[0] == "test" for ns in prefixed)
    public = store.list_namespaces(suffix=["public"])
    assert len(public) == 3 and all(ns[-1] == "public" for ns in public)
    assert store.list_namespaces(max_depth=2) == [("prod", "documents"), ("test", "documents"), ("test", "images")]
    assert len(store.list_namespaces(limit=3)) == 3
    assert store.list_namespaces(limit=3, offset=3) == sorted(namespaces)[3:]
    assert store.list_namespaces(prefix=["test", "*", "public"]) == [("test", "documents", "public"), ("test", "images", "public")]
    ops = store.batch([ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("public",)),), max_depth=None)])
    assert all(ns[-1] == "public" for ns in ops[0])
    for namespace in namespaces:
        store.delete(namespace, "dummy")
    assert store.list_namespaces() == []


def test_basic_ops_search_and_filters(store):
    namespace = ("test", "documents")
    store.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(namespace, "doc1")
    assert item.namespace == namespace and item.key == "doc1" and item.value["title"] == "Test Document"
    store.put(namespace, "doc1", {"title": "Updated Document", "content": "Hello, Updated!"})
    updated = store.get(namespace, "doc1")
    assert updated.value["title"] == "Updated Document" and updated.created_at == item.created_at
    assert updated.updated_at >= item.updated_at
    assert store.get(("test", "other_documents"), "doc1") is None
    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None

    data = [
        (("t", "docs"), "doc1", {"title": "First Doc", "author": "Alice", "tags": ["important"], "score": 4.5,
                                 "meta": {"lang": "en", "pages": 3}}),
        (("t", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["draft"], "score": 3.0,
                                 "meta": {"lang": "fr", "pages": 10}}),
        (("t", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["final"], "score": 5}),
    ]
    for ns, key, value in data:
        store.put(ns, key, value)
    assert len(store.search(("t",))) == 3
    assert [i.key for i in store.search(("t",))] == ["img1", "doc2", "doc1"]  # newest first
    docs = store.search(("t", "docs"))
    assert len(docs) == 2 and all(i.namespace == ("t", "docs") for i in docs)
    assert {i.key for i in store.search(("t",), filter={"author": "Alice"})} == {"doc1", "img1"}
    assert len(store.search(("t",), limit=2)) == 2 and len(store.search(("t",), offset=2)) == 1
    assert {i.key for i in store.search(("t",), filter={"score": {"$gt": 4}})} == {"doc1", "img1"}
    assert {i.key for i in store.search(("t",), filter={"score": {"$gte": 4.5, "$lt": 5}})} == {"doc1"}
    assert {i.key for i in store.search(("t",), filter={"score": {"$lte": 3}})} == {"doc2"}
    assert {i.key for i in store.search(("t",), filter={"author": {"$ne": "Alice"}})} == {"doc2"}
    assert {i.key for i in store.search(("t",), filter={"author": {"$eq": "Bob"}})} == {"doc2"}
    assert {i.key for i in store.search(("t",), filter={"tags": ["draft"]})} == {"doc2"}
    assert {i.key for i in store.search(("t",), filter={"meta": {"lang": "en"}})} == {"doc1"}
    assert store.search(("t",), filter={"author": "Nobody"}) == []
    hits = store.search(("t",), query="second doc")
    assert hits[0].key == "doc2" and hits[0].score == 1.0


def test_odd_keys_and_labels_round_trip(store):
    namespace = ("users", "a/b", "50% off", "日本")
    for key in ["k/with/slashes", ".", "..", "with space", "ü", "%00"]:
        store.put(namespace, key, {"k": key})
        assert store.get(namespace, key).value == {"k": key}
    assert store.list_namespaces(prefix=["users"]) == [namespace]
    with pytest.raises(InvalidNamespaceError):
        store.put(("langgraph", "x"), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.put(("a.b",), "k", {"v": 1})


def test_ttl_expiry_and_refresh(store, client):
    store.put(("ttl",), "short", {"v": 1}, ttl=0.0005)  # 30 ms
    store.put(("ttl",), "long", {"v": 2}, ttl=60)
    store.put(("ttl",), "forever", {"v": 3})
    import time

    time.sleep(0.3)
    assert store.get(("ttl",), "short") is None
    assert {i.key for i in store.search(("ttl",))} == {"long", "forever"}
    assert store.get(("ttl",), "long").value == {"v": 2}
    # The items are documents of a memory store, visible through the store API.
    stores = client.list_stores().data
    langgraph_store = next(s for s in stores if s["name"] == "langgraph")
    paths = {m["path"] for m in client.iter_store_memories(store_id=langgraph_store["id"])}
    assert {"/ttl/long", "/ttl/forever"} <= paths


async def test_async_batch(aclient):
    store = aclient.langgraph_store
    await store.aput(("a", "b"), "k", {"x": 1})
    assert (await store.aget(("a", "b"), "k")).value == {"x": 1}
    assert [i.key for i in await store.asearch(("a",))] == ["k"]
    assert await store.alist_namespaces() == [("a", "b")]
    await store.adelete(("a", "b"), "k")
    assert await store.aget(("a", "b"), "k") is None


def test_query_ranks_by_meaning_with_the_embedding_model(store, settings):
    """With recall's embedding model on, a query finds an item that shares
    none of its words, and every item comes back, most similar first."""
    settings.EMBEDDING_PROVIDER = "offline"
    store.put(("u1", "prefs"), "drink", {"text": "prefers green tea in the morning"})
    store.put(("u1", "prefs"), "city", {"text": "lives in Lisbon near the river"})
    store.put(("u1", "trips"), "may", {"text": "flies to Porto on May 3"})
    found = store.search(("u1",), query="what beverage does the user like to drink")
    assert [item.key for item in found][0] == "drink"
    assert len(found) == 3
    assert found[0].score > found[1].score >= found[2].score
    # Filters still apply before ranking.
    assert [item.key for item in store.search(("u1", "trips"), query="what beverage")] == ["may"]
    # And with the model off, the query is matched by its words.
    settings.EMBEDDING_PROVIDER = "none"
    assert [item.key for item in store.search(("u1",), query="green tea")] == ["drink"]
    assert store.search(("u1",), query="what beverage") == []
