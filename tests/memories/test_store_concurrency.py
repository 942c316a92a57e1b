"""Concurrent writers on PostgreSQL (real threads, real transactions): stale
preconditions lose cleanly, history holds exactly the winners, concurrent
upserts of one path make one memory."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

import pytest
from django.db import connection

from accounts.actors import Actor
from memories.models import MemoryItem, MemoryVersion
from memories.services.store_memories import store_memory_put, store_memory_update, store_memory_write
from memories.services.stores import memory_store_create
from memory_project.errors import DomainError
from tests.factories import WorkspaceFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

WRITERS = 8


def _race(work: Callable[[int], object]) -> list[object]:
    """Run `work(i)` in WRITERS threads released together; returns each result
    (the value, or the DomainError raised)."""
    barrier = threading.Barrier(WRITERS)
    results: list[object] = [None] * WRITERS

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except DomainError as exc:
            results[i] = exc
        except Exception as exc:  # anything else is a bug: keep it for the assertion
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.fixture
def setup():
    workspace = WorkspaceFactory(name="Race", slug="race")
    store = memory_store_create(workspace=workspace, name="race")
    actor = Actor.for_api_key("apikey_race")
    item, _ = store_memory_write(workspace=workspace, store_id=store.pk, path="/shared.md", content="v0", actor=actor)
    return workspace, store, item, actor


def _outcomes(results: list[object]) -> Counter:
    return Counter(type(r).__name__ if isinstance(r, Exception) else "ok" for r in results)


def test_same_content_sha256_precondition_one_winner(setup):
    workspace, store, item, actor = setup
    expected = item.content_sha256

    def work(i: int):
        return store_memory_update(
            workspace=workspace,
            store_id=store.pk,
            memory_id=item.pk,
            content=f"writer {i}",
            precondition={"type": "content_sha256", "content_sha256": expected},
            actor=actor,
        )

    results = _race(work)
    assert _outcomes(results) == Counter({"ok": 1, "PreconditionFailedError": WRITERS - 1})
    assert all(r.status_code == 409 for r in results if isinstance(r, DomainError))
    winner = next(r for r in results if not isinstance(r, Exception))
    item.refresh_from_db()
    assert item.content == winner.content and item.version == 2
    history = list(MemoryVersion.objects.filter(memory_id=item.pk).order_by("version").values_list("operation", "content"))
    assert history == [("created", "v0"), ("modified", winner.content)]


def test_same_integer_version_one_winner(setup):
    workspace, store, item, actor = setup

    def work(i: int):
        return store_memory_put(
            workspace=workspace, store_id=store.pk, memory_id=item.pk, content=f"writer {i}", version=1, actor=actor
        )

    results = _race(work)
    assert _outcomes(results) == Counter({"ok": 1, "PreconditionFailedError": WRITERS - 1})
    item.refresh_from_db()
    assert item.version == 2
    assert MemoryVersion.objects.filter(memory_id=item.pk).count() == 2


def test_unconditional_writers_all_land_in_history(setup):
    workspace, store, item, actor = setup

    def work(i: int):
        return store_memory_write(workspace=workspace, store_id=store.pk, path="/shared.md", content=f"w{i}", actor=actor)

    results = _race(work)
    assert _outcomes(results) == Counter({"ok": WRITERS})
    item.refresh_from_db()
    assert item.version == WRITERS + 1
    versions = list(MemoryVersion.objects.filter(memory_id=item.pk).values_list("version", flat=True))
    assert sorted(versions) == list(range(1, WRITERS + 2))  # no lost or duplicated version
    assert MemoryVersion.objects.get(memory_id=item.pk, version=WRITERS + 1).content == item.content


def test_concurrent_upserts_of_one_path_make_one_memory(setup):
    workspace, store, _, actor = setup

    def work(i: int):
        return store_memory_write(workspace=workspace, store_id=store.pk, path="/new/path.md", content=f"c{i}", actor=actor)

    results = _race(work)
    assert _outcomes(results) == Counter({"ok": WRITERS})
    assert MemoryItem.objects.filter(store=store, path="/new/path.md").count() == 1
    ops = Counter(MemoryVersion.objects.filter(path="/new/path.md").values_list("operation", flat=True))
    assert ops["created"] == 1 and ops["created"] + ops["modified"] == WRITERS


def test_concurrent_create_only_one_succeeds(setup):
    workspace, store, _, actor = setup

    def work(i: int):
        return store_memory_write(
            workspace=workspace, store_id=store.pk, path="/once.md", content=f"c{i}", precondition={"type": "not_exists"}, actor=actor
        )

    results = _race(work)
    assert _outcomes(results) == Counter({"ok": 1, "PreconditionFailedError": WRITERS - 1})
    assert MemoryVersion.objects.filter(path="/once.md").count() == 1


def test_concurrent_renames_onto_one_path(setup):
    workspace, store, _, actor = setup
    items = [
        store_memory_write(workspace=workspace, store_id=store.pk, path=f"/r{i}.md", content=str(i), actor=actor)[0]
        for i in range(WRITERS)
    ]

    def work(i: int):
        return store_memory_update(workspace=workspace, store_id=store.pk, memory_id=items[i].pk, path="/target.md", actor=actor)

    results = _race(work)
    assert _outcomes(results) == Counter({"ok": 1, "ConflictError": WRITERS - 1})
    assert MemoryItem.objects.filter(store=store, path="/target.md").count() == 1


def test_http_racers_through_the_sdk_get_409s_never_500s(live_server):
    """The same races end to end: N SDK clients, one live server."""
    import anthropic

    from tests.factories import make_api_key

    workspace = WorkspaceFactory(name="Race HTTP", slug="race-http")
    key = make_api_key(workspace)
    clients = [anthropic.Anthropic(api_key=key, base_url=live_server.url, max_retries=0) for _ in range(WRITERS)]
    store = clients[0].beta.memory_stores.create(name="race")
    memory = clients[0].beta.memory_stores.memories.create(store.id, path="/shared.md", content="v0")

    def update(i: int):
        try:
            return clients[i].beta.memory_stores.memories.update(
                memory.id,
                memory_store_id=store.id,
                content=f"writer {i}",
                precondition={"type": "content_sha256", "content_sha256": memory.content_sha256},
            )
        except anthropic.APIStatusError as exc:
            return exc.status_code

    results = _race(update)
    assert sorted(r if isinstance(r, int) else 200 for r in results) == [200] + [409] * (WRITERS - 1)

    def upsert(i: int):
        try:
            return clients[i].beta.memory_stores.memories.create(store.id, path="/fresh.md", content=f"c{i}")
        except anthropic.APIStatusError as exc:
            return exc.status_code

    results = _race(upsert)
    for client in clients:
        client.close()  # ends the keep-alive connections, so the server threads release theirs
    assert not [r for r in results if isinstance(r, int)]
    assert len({r.id for r in results}) == 1
    assert MemoryItem.objects.filter(store_id=store.id, path="/fresh.md").count() == 1
