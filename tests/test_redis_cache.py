"""Production's shared cache (Redis): each thread holds one connection, which
goes back to the pool as the thread ends and is replaced when the server
closed it."""

from __future__ import annotations

import threading
import uuid

import pytest
import redis
from django.conf import settings
from django.core.cache import cache

from memory_project.cache import read_and_count

pytestmark = pytest.mark.postgres  # the production configuration: PostgreSQL and Redis


def _client():
    return cache._cache.get_client(write=True)


def _close_this_threads_connection() -> None:
    """As the server does on a restart or an idle timeout (only this thread's
    connection: the suite's Celery worker talks to the same server)."""
    own = _client().client_id()
    server = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])
    try:
        assert server.client_kill_filter(_id=own) == 1
    finally:
        server.close()


def test_a_thread_keeps_its_client_and_connection():
    first = _client()
    cache.set("kept", 1, 60)
    assert _client() is first
    assert first.connection is not None and first.connection is _client().connection


def test_threads_do_not_share_a_connection():
    mine = _client()
    cache.get("warm")
    theirs = []
    thread = threading.Thread(target=lambda: (cache.get("warm"), theirs.append(_client())))
    thread.start()
    thread.join()
    assert theirs[0] is not mine and theirs[0].connection is not mine.connection


def test_a_finished_thread_gives_its_connection_back():
    pool = _client().connection_pool

    def use() -> None:
        cache.set("from-a-thread", 1, 60)

    for _ in range(20):
        thread = threading.Thread(target=use)
        thread.start()
        thread.join()
    import gc

    gc.collect()
    # Twenty threads came and went: their connections were returned, not leaked.
    assert len(pool._in_use_connections) <= 2


def test_a_forked_process_makes_its_own_client(monkeypatch):
    import os

    parent = _client()
    pid = os.getpid()
    monkeypatch.setattr(os, "getpid", lambda: pid + 1)
    assert _client() is not parent


def test_a_connection_the_server_closed_is_replaced():
    """A Redis restart or its idle timeout closes held connections: the next
    command on each reconnects instead of failing."""
    cache.set("survives", "yes", 60)
    _close_this_threads_connection()
    assert cache.get("survives") == "yes"
    _close_this_threads_connection()
    counter = f"after-close-{uuid.uuid4().hex}"
    assert read_and_count(cache, ["survives"], counter, 60) == ({"survives": "yes"}, 1)
