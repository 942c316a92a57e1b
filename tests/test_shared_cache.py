"""The embedded mode's shared cache (one SQLite file): values live as long as
they were given, as with Redis."""

from __future__ import annotations

import time

from memory_project.cache import SQLiteCache


def _cache(tmp_path, **params) -> SQLiteCache:
    return SQLiteCache(str(tmp_path / "cache.sqlite3"), params)


def test_a_value_expires_after_its_timeout(tmp_path, monkeypatch):
    cache = _cache(tmp_path)
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now)
    cache.set("short", "v", 5)
    cache.set_many({"a": 1, "b": 2}, 5)
    assert cache.get("short") == "v" and cache.get_many(["a", "b"]) == {"a": 1, "b": 2}
    monkeypatch.setattr(time, "time", lambda: now + 6)
    assert cache.get("short") is None
    assert cache.get_many(["a", "b"]) == {}
    assert cache.add("short", "again", 5)  # an expired key is free again


def test_the_default_timeout_and_none_for_never(tmp_path, monkeypatch):
    cache = _cache(tmp_path, TIMEOUT=60)
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now)
    cache.set("default", "v")
    cache.set("forever", "v", None)
    monkeypatch.setattr(time, "time", lambda: now + 61)
    assert cache.get("default") is None
    assert cache.get("forever") == "v"


def test_touch_moves_the_expiry(tmp_path, monkeypatch):
    cache = _cache(tmp_path)
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now)
    cache.set("k", "v", 5)
    assert cache.touch("k", 100)
    monkeypatch.setattr(time, "time", lambda: now + 50)
    assert cache.get("k") == "v"


def test_rows_expiring_decades_ahead_are_dropped_on_open(tmp_path):
    """An earlier version counted a timeout twice (rows expired decades from
    now): a new connection drops such rows, and keeps values cached forever."""
    import sqlite3

    cache = _cache(tmp_path)
    cache.set("forever", "v", None)
    cache.set("normal", "v", 300)
    db = sqlite3.connect(tmp_path / "cache.sqlite3")
    db.execute("INSERT INTO cache (key, value, expires) VALUES (?, ?, ?)",
               (cache.make_key("stale"), b"x", 2 * time.time()))
    db.commit()
    db.close()
    db = sqlite3.connect(tmp_path / "cache.sqlite3")
    db.execute("PRAGMA user_version = 0")  # as a file an earlier version wrote
    db.commit()
    db.close()
    reopened = _cache(tmp_path)
    assert reopened.get("stale") is None
    assert reopened.get("forever") == "v" and reopened.get("normal") == "v"


def test_a_timeout_longer_than_a_year_is_cut_to_one(tmp_path, monkeypatch):
    cache = _cache(tmp_path)
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now)
    cache.set("long", "v", 10 * 365 * 86400)
    monkeypatch.setattr(time, "time", lambda: now + 367 * 86400)
    assert cache.get("long") is None
