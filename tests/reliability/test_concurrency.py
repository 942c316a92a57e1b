"""Concurrent writers through the HTTP API on PostgreSQL, real threads.

Optimistic concurrency across both dialects (spec 003's `expected_version`,
spec 004's `content_sha256` precondition and spec 001's integer `version`
racing each other), appenders racing for the last floors across branches,
and batch status changes and deletes racing over overlapping sets. (Single-
dialect store races, upserts of one path and single-branch appenders are
tested beside their services.)
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections

from conversations.models import MAX_MESSAGES_PER_CONVERSATION, Conversation, Message
from memories.models import MemoryItem, MemoryVersion
from tests.conversations.helpers_bulk import bulk_fill
from tests.factories import make_api_key
from tests.reliability.world import client_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

WRITERS = 8


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def race(raw_key: str, n: int, request: Callable) -> list:
    """Run `request(client, i)` from `n` threads released together; each
    thread has its own client and database connection."""
    barrier = threading.Barrier(n)

    def run(i: int):
        client = client_for(raw_key)
        barrier.wait()
        try:
            return request(client, i)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


def _statuses(responses) -> Counter:
    return Counter(r.status_code for r in responses)


def _assert_one_winner(responses, ok: int = 200) -> int:
    codes = _statuses(responses)
    assert codes == {ok: 1, 409: len(responses) - 1}, codes
    for r in responses:
        if r.status_code == 409:
            assert r.json()["error"]["type"] == "memory_precondition_failed"
    return next(i for i, r in enumerate(responses) if r.status_code == ok)


@pytest.fixture
def key(workspace) -> str:
    return make_api_key(workspace)


def _history(memory_id: str) -> list[tuple[int, str]]:
    return list(MemoryVersion.objects.filter(memory_id=memory_id).order_by("version").values_list("version", "operation"))


def test_same_content_sha256_on_a_memory_item(key):
    api = client_for(key)
    item = api.post("/v1/memories", {"scope": "global", "type": "fact", "content": "v1"}, format="json").json()["data"]
    responses = race(
        key, WRITERS,
        lambda c, i: c.patch(
            f"/v1/memories/{item['id']}", {"content": f"writer {i}", "expected_content_sha256": sha("v1")}, format="json"
        ),
    )
    _assert_one_winner(responses)
    assert _history(item["id"]) == [(1, "created"), (2, "modified")]


@pytest.fixture
def store_doc(key):
    api = client_for(key)
    store = api.post("/v1/memory_stores", {"name": "race"}, format="json").json()
    doc = api.post(f"/v1/memory_stores/{store['id']}/memories", {"path": "/doc.md", "content": "v1"}, format="json").json()
    return store["id"], doc["id"]


def test_store_document_with_both_preconditions_mixed(key, store_doc):
    """Half the writers hold the hash, half the integer version, all of the same
    state: one of them wins, whichever dialect it spoke."""
    sid, mid = store_doc

    def write(c, i):
        url = f"/v1/memory_stores/{sid}/memories/{mid}"
        if i % 2:
            body = {"content": f"sha writer {i}", "precondition": {"type": "content_sha256", "content_sha256": sha("v1")}}
            return c.post(url, body, format="json")
        return c.put(url, {"content": f"version writer {i}", "version": 1}, format="json")

    responses = race(key, WRITERS, write)
    _assert_one_winner(responses)
    history = _history(mid)
    assert history == [(1, "created"), (2, "modified")]
    head = MemoryVersion.objects.get(memory_id=mid, version=2)
    assert MemoryItem.objects.get(pk=mid).content == head.content


def test_appenders_on_several_branches_never_pass_the_cap(workspace, key):
    api = client_for(key)
    conversation = bulk_fill(workspace, "crowded", MAX_MESSAGES_PER_CONVERSATION - 12)
    first = Message.objects.filter(conversation=conversation).order_by("floor_no").first()
    for name in ("b1", "b2"):
        assert api.post("/v1/conversations/crowded/branches", {"name": name, "from_message_id": first.pk}, format="json").status_code == 201
    branches = ["main", "b1", "b2"]

    def append(c, i):
        return [
            c.post("/v1/conversations/crowded/messages",
                   {"role": "user", "content": f"w{i}-{n}", "branch": branches[i % 3]}, format="json")
            for n in range(4)
        ]

    responses = [r for batch in race(key, 12, append) for r in batch]
    codes = _statuses(responses)
    assert codes[201] == 12 and codes[201] + codes[429] == len(responses), codes
    for r in responses:
        if r.status_code == 429:
            assert r.json()["error"]["type"] == "quota_exceeded_error"
    conversation = Conversation.objects.get(pk=conversation.pk)
    assert conversation.message_count == MAX_MESSAGES_PER_CONVERSATION
    assert Message.objects.filter(conversation=conversation).count() == MAX_MESSAGES_PER_CONVERSATION


def test_batch_status_changes_over_overlapping_sets(key):
    api = client_for(key)
    ids = [
        api.post("/v1/memories", {"scope": "global", "type": "fact", "content": f"item {n}"}, format="json").json()["data"]["id"]
        for n in range(24)
    ]

    def flip(c, i):
        # Overlapping windows, opposite orders, alternating targets: the lock
        # order (by primary key) must keep this deadlock-free.
        window = ids[i * 2 : i * 2 + 12]
        if i % 2:
            window = list(reversed(window))
        return c.patch(
            "/v1/memories/batch/status", {"ids": window, "status": "deprecated" if i % 2 else "active"}, format="json"
        )

    responses = race(key, WRITERS, flip)
    assert _statuses(responses) == {200: WRITERS}, [r.content[:200] for r in responses if r.status_code != 200]
    stats = api.get("/v1/memories/stats").json()["data"]
    items = MemoryItem.objects.filter(pk__in=ids)
    assert stats["total"] == 24
    assert stats["deprecated"] == items.filter(status="deprecated").count()
    assert stats["active"] == items.filter(status="active").count()
    for item in items:
        history = _history(item.pk)
        # One version per real change, numbered without gaps, ending at the item's own.
        assert [v for v, _ in history] == list(range(1, item.version + 1)), (item.pk, history)
        head = MemoryVersion.objects.get(memory_id=item.pk, version=item.version)
        assert head.attributes["status"] == item.status


def test_batch_delete_racing_batch_status(key):
    api = client_for(key)
    ids = [
        api.post("/v1/memories", {"scope": "global", "type": "fact", "content": f"d{n}"}, format="json").json()["data"]["id"]
        for n in range(12)
    ]

    def act(c, i):
        if i % 2:
            return c.post("/v1/memories/batch/delete", {"ids": ids[i:]}, format="json")
        return c.patch("/v1/memories/batch/status", {"ids": ids[: 12 - i], "status": "deprecated"}, format="json")

    responses = race(key, 6, act)
    assert _statuses(responses) == {200: 6}
    for memory_id in ids:
        history = _history(memory_id)
        ops = [op for _, op in history]
        assert ops[0] == "created" and ops.count("created") == 1
        exists = MemoryItem.objects.filter(pk=memory_id).exists()
        # Deleted exactly once and nothing after it; or alive with no deletion.
        assert ops.count("deleted") == (0 if exists else 1)
        if not exists:
            assert ops[-1] == "deleted"
