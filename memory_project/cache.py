"""The shared caches: Redis in production (`RedisCache`), and for the
embedded mode one SQLite file (`SQLiteCache`).

`SQLiteCache`: one SQLite file that every gunicorn
worker (and thread) opens, so cached API keys and throttle counters are the
same for all of them. A per-process cache (Django's locmem) gave each worker
its own rate-limit window: with two workers a 5/min limit let 10 through.

A separate file from the service's database, so cache writes never wait on
the database's write lock (nor it on them). Counters are updated with one
atomic statement (`incr`, `incr_window`), which Django's file and database
caches cannot do (their `incr` is a read then a write). Cached values are
disposable: the file runs with `synchronous=OFF` and is rebuilt if missing.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import random
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient as DjangoRedisCacheClient
from redis.backoff import NoBackoff
from redis.client import PubSub
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.retry import Retry

# Expired rows are swept by a write now and then rather than on every write.
CULL_EVERY_WRITES = 1000
# No value is cached for longer than this (API keys: minutes; rate windows: a
# day); a longer timeout is cut to it.
_LONGEST_TIMEOUT_SECONDS = 366 * 86400

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS cache "
    "(key TEXT PRIMARY KEY, value BLOB NOT NULL, expires REAL NOT NULL) WITHOUT ROWID"
)


class SQLiteCache(BaseCache):
    """`LOCATION` is the file's path. Values are pickled; integers stored by
    `incr` / `incr_window` stay SQL integers, so they can be counted in place."""

    def __init__(self, location: str, params: dict[str, Any]):
        super().__init__(params)
        self._path = location
        self._local = threading.local()

    # --- Connections: one per thread and process (gunicorn forks after import).

    def _db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None or self._local.pid != os.getpid():
            Path(self._path).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self._path, timeout=5, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=OFF")
            conn.execute(_SCHEMA)
            if conn.execute("PRAGMA user_version").fetchone()[0] < 1:
                # Once per file: rows an earlier version stored with a timeout
                # counted twice (expiring decades from now) would never be
                # read again from the database; dropped, as any expired row is.
                conn.execute("DELETE FROM cache WHERE expires > ? AND expires < ?",
                             (time.time() + _LONGEST_TIMEOUT_SECONDS, float("inf")))
                conn.execute("PRAGMA user_version = 1")
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def _expiry(self, timeout: Any) -> float:
        # Django's get_backend_timeout already answers the moment of expiry
        # (now + timeout), or None for "never"; capped at the longest timeout.
        expires = self.get_backend_timeout(timeout)
        return float("inf") if expires is None else min(expires, time.time() + _LONGEST_TIMEOUT_SECONDS)

    @staticmethod
    def _dump(value: Any) -> Any:
        return value if type(value) is int else pickle.dumps(value, pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def _load(value: Any) -> Any:
        return value if isinstance(value, int) else pickle.loads(value)  # noqa: S301 - our own pickles

    def _maybe_cull(self, db: sqlite3.Connection) -> None:
        if random.randrange(CULL_EVERY_WRITES) == 0:  # noqa: S311 - not security
            db.execute("DELETE FROM cache WHERE expires <= ?", (time.time(),))

    # --- The cache API ------------------------------------------------------------

    def get(self, key: str, default: Any = None, version: int | None = None) -> Any:
        key = self.make_and_validate_key(key, version=version)
        row = self._db().execute("SELECT value FROM cache WHERE key = ? AND expires > ?", (key, time.time())).fetchone()
        return default if row is None else self._load(row[0])

    def set(self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> None:
        key = self.make_and_validate_key(key, version=version)
        db = self._db()
        db.execute(
            "INSERT INTO cache (key, value, expires) VALUES (?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = excluded.expires",
            (key, self._dump(value), self._expiry(timeout)),
        )
        self._maybe_cull(db)

    def add(self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        db = self._db()
        row = db.execute(
            "INSERT INTO cache (key, value, expires) VALUES (?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = excluded.expires "
            "WHERE cache.expires <= ? RETURNING 1",
            (key, self._dump(value), self._expiry(timeout), time.time()),
        ).fetchone()
        return row is not None

    def touch(self, key: str, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        cursor = self._db().execute(
            "UPDATE cache SET expires = ? WHERE key = ? AND expires > ?", (self._expiry(timeout), key, time.time())
        )
        return cursor.rowcount > 0

    def delete(self, key: str, version: int | None = None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        return self._db().execute("DELETE FROM cache WHERE key = ?", (key,)).rowcount > 0

    def delete_many(self, keys: Any, version: int | None = None) -> None:
        names = [self.make_and_validate_key(key, version=version) for key in keys]
        if names:
            self._db().execute(f"DELETE FROM cache WHERE key IN ({', '.join('?' * len(names))})", names)  # noqa: S608

    def get_many(self, keys: Any, version: int | None = None) -> dict[str, Any]:
        names = {self.make_and_validate_key(key, version=version): key for key in keys}
        if not names:
            return {}
        rows = self._db().execute(
            f"SELECT key, value FROM cache WHERE key IN ({', '.join('?' * len(names))}) AND expires > ?",  # noqa: S608
            [*names, time.time()],
        ).fetchall()
        return {names[name]: self._load(value) for name, value in rows}

    def has_key(self, key: str, version: int | None = None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        return self._db().execute("SELECT 1 FROM cache WHERE key = ? AND expires > ?", (key, time.time())).fetchone() is not None

    def incr(self, key: str, delta: int = 1, version: int | None = None) -> int:
        """Atomic across processes; ValueError for a missing key (Django's contract)."""
        name = self.make_and_validate_key(key, version=version)
        row = self._db().execute(
            "UPDATE cache SET value = value + ? WHERE key = ? AND expires > ? AND typeof(value) = 'integer' "
            "RETURNING value",
            (delta, name, time.time()),
        ).fetchone()
        if row is None:
            if self.has_key(key, version=version):
                raise TypeError(f"Key '{key}' does not hold an integer.")
            raise ValueError(f"Key '{key}' not found.")
        return row[0]

    def incr_window(self, key: str, timeout: int, version: int | None = None, *, hits: int = 1) -> int:
        """Count `hits` hits on `key`, a counter that lives `timeout` seconds
        from its first hit; the count after them. One atomic statement."""
        name = self.make_and_validate_key(key, version=version)
        now = time.time()
        db = self._db()
        row = db.execute(
            "INSERT INTO cache (key, value, expires) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
            "value = CASE WHEN cache.expires > ? AND typeof(cache.value) = 'integer' "
            "THEN cache.value + excluded.value ELSE excluded.value END, "
            "expires = CASE WHEN cache.expires > ? THEN cache.expires ELSE excluded.expires END "
            "RETURNING value",
            (name, hits, now + timeout, now, now),
        ).fetchone()
        self._maybe_cull(db)
        return row[0]

    def read_and_count(self, keys: Sequence[str], counter: str, ttl: int, hits: int = 1) -> tuple[dict[str, Any], int]:
        """`read_and_count` here: each an atomic statement on a local file."""
        return (self.get_many(keys) if keys else {}), self.incr_window(counter, ttl, hits=hits)

    def clear(self) -> None:
        self._db().execute("DELETE FROM cache")

    def close(self, **kwargs: Any) -> None:
        # Kept open across requests: opening a SQLite file costs more than a lookup.
        pass


# Redis: the values of the keys named first (MGET), and ARGV[2] hits counted
# on the last key, a counter that lives ARGV[1] seconds from its first hit
# (INCRBY, EXPIRE). One script: one command to send and one reply to parse, where a
# pipeline of the three cost redis-py twice the client time (~140 vs ~80 us a
# call here); and atomic, so a counter never outlives its window.
_READ_AND_COUNT = """
local counter = KEYS[#KEYS]
local found = {}
if #KEYS > 1 then
    found = redis.call('MGET', unpack(KEYS, 1, #KEYS - 1))
end
local count = redis.call('INCRBY', counter, ARGV[2])
if count == tonumber(ARGV[2]) then
    redis.call('EXPIRE', counter, ARGV[1])
end
found[#KEYS] = count
return found
"""
# The name Redis knows a script by (its SHA-1), not a security hash.
_READ_AND_COUNT_SHA = hashlib.sha1(_READ_AND_COUNT.encode()).hexdigest()  # noqa: S324


class RedisCacheClient(DjangoRedisCacheClient):
    """Django's client builds a new `redis.Redis` for every cache call, and
    building one fills its table of ~170 response callbacks: that cost more
    than the round trip of an API key lookup. Here each thread keeps one
    `redis.Redis` per pool, holding one connection of that pool for the
    thread's life: a command then skips the pool's checkout and return
    (~25 of the ~90 us a lookup cost redis-py here). A thread's connection
    goes back to the pool when the thread ends; a forked process (a gunicorn
    or Celery worker) makes its own.

    The pool's checkout was also where a connection the server had closed
    (a restart, its idle `timeout`) was found and replaced. A held connection
    finds it as its command fails, so a command that fails to connect or
    loses its connection is sent once more, on a new one."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._pool_options.setdefault("retry", Retry(NoBackoff(), retries=1, supported_errors=(RedisConnectionError,)))
        self._local = threading.local()

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            local.clients, local.pid = {}, os.getpid()
        client = local.clients.get(id(pool))
        if client is None:
            client = local.clients[id(pool)] = self._client(connection_pool=pool, single_connection_client=True)
        return client

    def subscription(self, channel: str) -> PubSub:
        """A new subscription to `channel`, on a connection of its own to the
        write server: `get_message(timeout=0)` then reads what was published
        to it since, without waiting. The connection is never silently
        replaced (no retry): news published while it was down would be lost
        unnoticed, so a failure is raised for the subscriber to judge."""
        # A server that does not answer is given up on soon: requests go to
        # the shared cache meanwhile, and try again later.
        options = {"socket_connect_timeout": 2, **self._pool_options, "retry": Retry(NoBackoff(), retries=0)}
        pool = self._pool_class.from_url(self._servers[0], **options)
        pubsub = self._client(connection_pool=pool).pubsub()
        pubsub.subscribe(channel)
        return pubsub

    def read_and_count(self, names: list[str], counter: str, ttl: int, hits: int) -> list[Any]:
        """`_READ_AND_COUNT` on the write server: the values of `names` (None
        for a missing one), then the counter's count. The script runs by its
        digest, and is loaded first into a server that does not hold it yet
        (a new one, a restart, a failover)."""
        client = self.get_client(counter, write=True)
        try:
            return client.evalsha(_READ_AND_COUNT_SHA, len(names) + 1, *names, counter, ttl, hits)
        except NoScriptError:
            client.script_load(_READ_AND_COUNT)
            return client.evalsha(_READ_AND_COUNT_SHA, len(names) + 1, *names, counter, ttl, hits)


class RedisCache(DjangoRedisCache):
    """Django's Redis cache with `RedisCacheClient` above, and its server's
    publish/subscribe for telling every process that a cached value changed."""

    def __init__(self, server: str, params: dict[str, Any]):
        super().__init__(server, params)
        self._class = RedisCacheClient

    def publish(self, channel: str, message: str) -> None:
        """Send `message` to the subscribers of `channel` (named as a key is, so
        caches sharing a server under other prefixes do not hear it)."""
        self._cache.get_client(write=True).publish(self.make_key(channel), message)

    def subscription(self, channel: str) -> PubSub:
        """A new subscription to `channel` (see `RedisCacheClient.subscription`)."""
        return self._cache.subscription(self.make_key(channel))

    def read_and_count(self, keys: Sequence[str], counter: str, ttl: int, hits: int = 1) -> tuple[dict[str, Any], int]:
        """`read_and_count` here: one command (`_READ_AND_COUNT`)."""
        # The project's own keys (a key's prefix, a rate window): made, not
        # validated (the check only warns of keys memcached could not hold).
        names = [self.make_key(key) for key in keys]
        *values, count = self._cache.read_and_count(names, self.make_key(counter), ttl, hits)
        loads = self._cache._serializer.loads
        found = {key: loads(value) for key, value in zip(keys, values, strict=True) if value is not None}
        return found, int(count)


def read_and_count(
    cache: BaseCache, keys: Sequence[str], counter: str, ttl: int, hits: int = 1
) -> tuple[dict[str, Any], int]:
    """`cache.get_many(keys)` and `hits` hits counted on the counter `counter`
    (created with `ttl` seconds to live), with the count including them.
    The project's caches do both at once (`RedisCache.read_and_count`: one
    round trip, so an API request's key lookup and rate count cost one, not
    two; `SQLiteCache.read_and_count`)."""
    own = getattr(cache, "read_and_count", None)
    if own is not None:
        return own(keys, counter, ttl, hits)
    # Any other backend: not atomic across processes, right within one.
    found = cache.get_many(keys) if keys else {}
    cache.add(counter, 0, ttl)
    try:
        return found, cache.incr(counter, hits)
    except ValueError:  # expired between the two calls
        cache.set(counter, hits, ttl)
        return found, hits
