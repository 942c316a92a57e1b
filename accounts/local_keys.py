"""API key rows kept in each web process, so that an authenticated request
whose rate window is leased (`accounts.throttling.WindowLeases`) costs no
cache round trip at all.

A kept row is only as good as the news of its changes. Every change to a key
or its workspace is published on the shared cache's `CHANNEL` (`accounts.apps`)
as it is recorded there, and each process reads what was published, without
waiting, before it answers from a kept row: a change is seen by every request
that starts after its news reached the process (on one host, well under a
millisecond after the change's commit returned; the process that made the
change drops its own row at once). Rows are kept only while the subscription
is known to hear everything: until it confirms (and after it fails, when news
may have been missed) every lookup goes to the shared cache, as it does on a
cache without publish/subscribe (the embedded mode's SQLite file, which is on
local disk anyway). A row is also read again after `KEEP_SECONDS` whatever was
heard, so a connection that dies without a word costs at most that much
staleness.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache as default_cache
from redis.exceptions import NoPermissionError, RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

CHANNEL = "api_key_changed"
# The longest a row is kept here without being read from the shared cache
# again: a lookup there every few seconds per key is nothing beside a
# request's, and it bounds what a silently dead subscription could miss.
KEEP_SECONDS = 10.0
# The most rows kept at once: a process's share of memory stays small however
# many keys its requests present.
MOST_KEPT = 4096
# After a subscription fails, how long lookups go to the shared cache before
# subscribing again (a server that is down is not dialled on every request).
RESUBSCRIBE_SECONDS = 5.0


class LocalKeys:
    """`CachedKey` rows by key prefix, for this process, kept as their field
    values (`_frozen`). Each caller gets its own copy (`_thawed`): a request
    may stamp its key (`last_used_at`, `cache_read_at`) without touching
    another's."""

    def __init__(self, cache: Any = default_cache):
        self._cache = cache
        # Counts the changes heard, so a row read from the shared cache before
        # a change is not kept after it (`keep`'s `heard`).
        self._heard = 0
        self._start()
        os.register_at_fork(after_in_child=self._start)

    def _start(self) -> None:
        """A process's first state, and a forked child's (a gunicorn worker):
        the parent's rows, subscription and lock are not its own (a lock held
        by another of the parent's threads would never be released here)."""
        self._lock = threading.Lock()
        # prefix -> (kept until, the row's read_at, the row's field values)
        self._rows: dict[str, tuple[float, float, tuple]] = {}
        self._heard += 1
        self._subscription: Any = None
        self._subscribing = False
        self._listening = False
        self._retry_at = 0.0

    def _enabled(self) -> bool:
        return hasattr(self._cache, "subscription")

    def _subscribe(self) -> None:
        """Subscribe (outside the lock: connecting may take a while, and
        other requests go to the shared cache meanwhile)."""
        try:
            subscription, retry_in = self._cache.subscription(CHANNEL), 0.0
        except NoPermissionError:
            subscription, retry_in = None, _refused_channels()
        except (RedisError, OSError):
            subscription, retry_in = None, RESUBSCRIBE_SECONDS
        with self._lock:
            self._subscribing = False
            self._subscription = subscription
            self._retry_at = time.monotonic() + retry_in

    def _catch_up(self) -> tuple[bool, bool]:
        """Read what was published since the last call (under the lock).
        Answers whether a subscription is wanted and nobody is making one,
        and whether every message that began to arrive was read whole."""
        if self._subscription is None:
            wanted = not self._subscribing and time.monotonic() >= self._retry_at
            self._subscribing = self._subscribing or wanted
            return wanted, True
        try:
            while (message := self._subscription.get_message(timeout=0)) is not None:
                if message["type"] == "subscribe":
                    # From here on every change is heard; what came before is unknown.
                    self._forget_all()
                    self._listening = True
                elif message["type"] == "message":
                    for prefix in message["data"].decode().split():
                        self._rows.pop(prefix, None)
                    self._heard += 1
        except RedisTimeoutError:
            # A message only partly arrived: it may be news of the row asked
            # for. The rest is read next time.
            return False, False
        except NoPermissionError:
            self._stop_listening(retry_in=_refused_channels())
        except (RedisError, OSError):
            # A lost connection may have lost news too: nothing kept is
            # trusted, and a new subscription is made after a pause.
            self._stop_listening(retry_in=RESUBSCRIBE_SECONDS)
        return False, True

    def _stop_listening(self, *, retry_in: float) -> None:
        subscription, self._subscription, self._listening = self._subscription, None, False
        self._retry_at = time.monotonic() + retry_in
        self._forget_all()
        if subscription is not None:
            _close(subscription)

    def _forget_all(self) -> None:
        self._rows.clear()
        self._heard += 1

    def get(self, prefix: str) -> tuple[Any, int]:
        """The kept row for `prefix` (a `CachedKey`, None if none is kept),
        and the count of changes heard so far, for `keep` (-1 while the
        subscription does not hear everything: nothing may be kept)."""
        # A process that subscribed has a cache that publishes: only until
        # then is the cache asked (through Django's per-thread proxy).
        if self._subscription is None and not self._enabled():
            return None, -1
        with self._lock:
            subscribe, settled = self._catch_up()
            if self._listening and settled:
                heard, kept = self._heard, self._rows.get(prefix)
            else:
                heard, kept = -1, None
        if subscribe:
            self._subscribe()
        if kept is None or kept[0] <= time.monotonic():
            return None, heard
        return _thawed(kept[2], kept[1]), heard

    def keep(self, prefix: str, entry: Any, *, heard: int) -> None:
        """Keep `entry`, read from the shared cache after `get` answered
        `heard`, unless a change was heard since (it may predate the change).
        Only a key's row is kept: a prefix no key has (a client's mistake, or
        guesses) is answered by the shared cache."""
        if heard < 0 or entry.api_key is None:
            return
        lifetime = min(KEEP_SECONDS, entry.read_at + settings.API_KEY_CACHE_SECONDS - time.time())
        frozen = _frozen(entry)
        if lifetime <= 0 or frozen is None:
            return
        with self._lock:
            if not self._listening or self._heard != heard:
                return
            if len(self._rows) >= MOST_KEPT:
                now = time.monotonic()
                self._rows = {p: kept for p, kept in self._rows.items() if kept[0] > now}
                if len(self._rows) >= MOST_KEPT:
                    return
            self._rows[prefix] = (time.monotonic() + lifetime, entry.read_at, frozen)

    def replace(self, prefix: str, entry: Any) -> None:
        """Put a stamped copy (`last_used_at`) of the row kept for `prefix` in
        its place, keeping its time to live: only if the row kept is still
        the one the copy was made from (same read), never over a row read
        after a change."""
        frozen = _frozen(entry)
        with self._lock:
            kept = self._rows.get(prefix)
            if kept is not None and kept[1] == entry.read_at:
                if frozen is None:
                    del self._rows[prefix]
                else:
                    self._rows[prefix] = (kept[0], kept[1], frozen)

    def forget(self, prefixes: list[str]) -> None:
        """Drop rows this process changed: its own next request must not wait
        for the news to come back from the shared cache."""
        with self._lock:
            for prefix in prefixes:
                self._rows.pop(prefix, None)
            self._heard += 1


def _frozen(entry: Any) -> tuple | None:
    """What `_thawed` builds a copy of `entry` (a `CachedKey` with a key and
    its workspace) from: the classes and the two rows' field values, all
    immutable (text, flags, times), so copies share nothing a request could
    change. Building a copy from them (`Model.from_db`, as a query does) took
    half the time unpickling the row did, and unpickling was ~7% of a
    checkpoint put's CPU in-process. None when the workspace was not read
    with the key (the row is then not kept: a copy would query it)."""
    key = entry.api_key
    workspace_field = key._meta.get_field("workspace")
    if not workspace_field.is_cached(key):
        return None
    workspace = workspace_field.get_cached_value(key)
    return (
        type(entry),
        workspace_field,
        key._state.db,
        tuple(getattr(key, field.attname) for field in key._meta.concrete_fields),
        tuple(getattr(workspace, field.attname) for field in workspace._meta.concrete_fields),
    )


def _thawed(frozen: tuple, read_at: float) -> Any:
    """A new `CachedKey` from `_frozen`'s values, read at `read_at`."""
    entry_class, workspace_field, db, key_values, workspace_values = frozen
    key_class, workspace_class = workspace_field.model, workspace_field.related_model
    # With every field's value given, `from_db` takes them in the fields' order.
    key = key_class.from_db(db, None, key_values)
    workspace_field.set_cached_value(key, workspace_class.from_db(db, None, workspace_values))
    return entry_class(read_at, key)


def _refused_channels() -> float:
    """A Redis user without access to channels: rows are never kept here
    (the pause before subscribing again is endless)."""
    logger.warning("API key rows are not kept per process: the cache's Redis user may not use channels.")
    return float("inf")


def _close(subscription: Any) -> None:
    with contextlib.suppress(RedisError, OSError):
        subscription.close()
    with contextlib.suppress(RedisError, OSError):
        subscription.connection_pool.disconnect()


def publish_changed(prefixes: list[str], *, cache: Any = default_cache) -> None:
    """Tell every process's `LocalKeys` (this one's at once) that these keys
    changed. A Redis user that may not publish may not subscribe either: no
    process keeps rows then, and the shared cache's record of the change is
    what every lookup reads."""
    local_keys.forget(prefixes)
    publish = getattr(cache, "publish", None)
    if publish is None:
        return
    try:
        publish(CHANNEL, " ".join(prefixes))  # prefixes are hex: one message for all of them
    except NoPermissionError:
        logger.warning("API key changes are not published: the cache's Redis user may not publish.")


local_keys = LocalKeys()
