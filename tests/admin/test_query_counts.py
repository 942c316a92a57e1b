"""Every changelist costs the same number of queries for 20 rows as for 200."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.actors import Actor
from conversations.models import Conversation
from memories.models import MemoryJob, ScopeState
from memories.services.edges import memory_edge_create
from memories.services.items import memory_item_create
from memories.services.store_memories import store_memory_write
from memories.services.stores import memory_store_create

pytestmark = pytest.mark.django_db


def _memories(workspace, start: int, count: int, **fields) -> list:
    return [
        memory_item_create(workspace=workspace, actor=Actor.system(), scope="global", type="fact", content=f"Fact {i}.", **fields)
        for i in range(start, start + count)
    ]


def _grow(kind: str, workspace, start: int, count: int) -> None:
    if kind in ("memoryversion", "reviewitem"):
        _memories(workspace, start, count, lifecycle_status="pending")
    elif kind == "memoryedge":
        items = _memories(workspace, start, count + 1)
        for a, b in zip(items, items[1:], strict=False):
            memory_edge_create(workspace=workspace, from_id=a.pk, to_id=b.pk, relation="supports")
    elif kind == "memoryjob":
        MemoryJob.objects.bulk_create(
            MemoryJob(workspace=workspace, kind="extract", scope="chat", scope_id=f"c{i}", status="failed", error=f"E{i}\nboom")
            for i in range(start, start + count)
        )
    elif kind == "scopestate":
        ScopeState.objects.bulk_create(
            ScopeState(workspace=workspace, scope="chat", scope_id=f"c{i}", micro_count=i % 12) for i in range(start, start + count)
        )
    elif kind == "conversation":
        Conversation.objects.bulk_create(
            Conversation(workspace=workspace, external_id=f"conv-{i}", metadata={"summary": "s"} if i % 2 else {})
            for i in range(start, start + count)
        )
    elif kind == "memorystore":
        for i in range(start, start + count):
            store = memory_store_create(workspace=workspace, name=f"Store {i}")
            store_memory_write(workspace=workspace, store_id=store.pk, path="/a.md", content="x", actor=Actor.system())


URLS = {
    "memoryversion": "/admin/memories/memoryversion/",
    "reviewitem": "/admin/memories/reviewitem/",
    "memoryedge": "/admin/memories/memoryedge/",
    "memoryjob": "/admin/memories/memoryjob/",
    "scopestate": "/admin/memories/scopestate/",
    "conversation": "/admin/conversations/conversation/",
    "memorystore": "/admin/memories/memorystore/",
}


@pytest.mark.parametrize("kind", list(URLS))
def test_changelist_queries_do_not_grow(admin_client, review_workspace, django_assert_max_num_queries, kind):
    url = URLS[kind]
    small, large = (5, 40) if kind == "memorystore" else (20, 200)
    _grow(kind, review_workspace, 0, small)
    admin_client.get(url)
    with CaptureQueriesContext(connection) as baseline:
        assert admin_client.get(url).status_code == 200
    _grow(kind, review_workspace, small, large - small)
    with django_assert_max_num_queries(len(baseline.captured_queries)):
        assert admin_client.get(url).status_code == 200
