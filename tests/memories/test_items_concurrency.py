"""Lock discipline under real concurrency (PostgreSQL, real threads)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection

from memories.models import MemoryItem, MemoryVersion
from memories.services.items import memory_item_update
from memories.services.items_batch import memory_items_set_status
from memory_project.errors import PreconditionFailedError
from tests.memories.helpers_items import AGENT, make_item

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _run_concurrently(workers: list[Callable[[], str]]) -> list[str]:
    outcomes: list[str] = []
    barrier = threading.Barrier(len(workers))

    def run(work: Callable[[], str]) -> None:
        barrier.wait()
        try:
            outcomes.append(work())
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(work,)) for work in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_stale_expected_version_loses_exactly_once(workspace):
    item = make_item(workspace, content="v1")

    def update(text: str) -> Callable[[], str]:
        def work() -> str:
            try:
                memory_item_update(
                    workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"content": text}, expected_version=1
                )
                return "ok"
            except PreconditionFailedError:
                return "stale"

        return work

    outcomes = _run_concurrently([update(f"writer {n}") for n in range(4)])
    assert sorted(outcomes) == ["ok", "stale", "stale", "stale"]
    fresh = MemoryItem.objects.get(pk=item.pk)
    assert fresh.version == 2
    assert MemoryVersion.objects.filter(memory_id=item.pk).count() == 2


def test_overlapping_batches_do_not_deadlock_and_version_every_change(workspace):
    items = [make_item(workspace, content=f"m{n}") for n in range(40)]
    ids = [item.pk for item in items]

    def batch(order: list[str], status: str) -> Callable[[], str]:
        def work() -> str:
            memory_items_set_status(workspace=workspace, actor=AGENT, ids=order, status=status)
            return status

        return work

    outcomes = _run_concurrently(
        [batch(ids, "deprecated"), batch(list(reversed(ids)), "active"), batch(ids[::2], "deprecated")]
    )
    assert len(outcomes) == 3
    for item in MemoryItem.objects.filter(pk__in=ids):
        # Every change wrote exactly one version, so the counter and history agree.
        assert MemoryVersion.objects.filter(memory_id=item.pk).count() == item.version
