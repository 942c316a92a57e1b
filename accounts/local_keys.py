"""API key rows kept in each web process, so that an authenticated request
whose rate window is leased (`accounts.throttling.WindowLeases`) costs no
cache round trip at all.

A kept row is only as good as the news of its changes. Every change to a key
or its workspace is published on the shared cache's `CHANNEL` (`accounts.apps`)
as it is recorded there, and each process reads what was published, without
waiting, before it answers from a kept row: a revoke that has returned is
heard by every request that starts after it. Rows are kept only while the
subscription is known to hear everything: until it confirms (and after it
fails or reconnects, when news may have been missed) every lookup goes to the
shared cache, as it does on a cache without publish/subscribe (the embedded
mode's SQLite file, which is on local disk anyway). A row is also read again
after `KEEP_SECONDS` whatever was heard, so a connection that dies without a
word costs at most that much staleness.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import threading
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache as default_cache
from redis.exceptions import RedisError

CHANNEL = "api_key_changed"
# The longest a row is kept here without being read from the shared cache again.
KEEP_SECONDS = 60.0
# The most rows kept at once: a process's share of memory stays small however
# many keys its requests present.
MOST_KEPT = 4096


class LocalKeys:
    """Pickled `CachedKey` rows by key prefix, for this process. Each caller
    gets its own unpickled copy: a request may stamp its key (`last_used_at`,
    `cache_read_at`) without touching another's."""

    def __init__(self, cache: Any = default_cache):
        self._cache = cache
        self._lock = threading.Lock()
        self._rows: dict[str, tuple[float, bytes]] = {}
        # Counts the changes heard, so a row read from the shared cache before
        # a change is not kept after it (`keep`'s `heard`).
        self._heard = 0
        self._subscription: Any = None
        self._listening = False
        self._pid = 0

    def _enabled(self) -> bool:
        return hasattr(self._cache, "subscription")

    def _catch_up(self) -> None:
        """Read what was published since the last call (under the lock). A
        new process (a forked worker) subscribes afresh: the parent's
        connection is not its own."""
        if self._pid != os.getpid():
            self._subscription, self._listening, self._pid = None, False, os.getpid()
            self._forget_all()
        try:
            if self._subscription is None:
                self._subscription = self._cache.subscription(CHANNEL)
            while (message := self._subscription.get_message(timeout=0)) is not None:
                if message["type"] == "subscribe":
                    # From here on every change is heard; what came before is unknown.
                    self._forget_all()
                    self._listening = True
                elif message["type"] == "message":
                    self._rows.pop(message["data"].decode(), None)
                    self._heard += 1
        except (RedisError, OSError):
            # A lost connection may have lost news too: nothing kept is trusted,
            # and the next lookup subscribes again.
            self._stop_listening()

    def _stop_listening(self) -> None:
        subscription, self._subscription, self._listening = self._subscription, None, False
        self._forget_all()
        if subscription is not None:
            with contextlib.suppress(RedisError, OSError):
                subscription.close()

    def _forget_all(self) -> None:
        self._rows.clear()
        self._heard += 1

    def get(self, prefix: str) -> tuple[Any, int]:
        """The kept row for `prefix` (a `CachedKey`, None if none is kept),
        and the count of changes heard so far, for `keep`."""
        if not self._enabled():
            return None, 0
        with self._lock:
            self._catch_up()
            if not self._listening:
                return None, -1
            kept = self._rows.get(prefix)
            heard = self._heard
        if kept is None or kept[0] <= time.monotonic():
            return None, heard
        return pickle.loads(kept[1]), heard  # noqa: S301 - pickled here, from the shared cache's row

    def keep(self, prefix: str, entry: Any, *, heard: int) -> None:
        """Keep `entry`, read from the shared cache after `get` answered
        `heard`, unless a change was heard since (it may predate the change).
        Only a key's row is kept: a prefix no key has (a client's mistake, or
        guesses) is answered by the shared cache."""
        if heard < 0 or entry.api_key is None or not self._enabled():
            return
        lifetime = min(KEEP_SECONDS, entry.read_at + settings.API_KEY_CACHE_SECONDS - time.time())
        if lifetime <= 0:
            return
        blob = pickle.dumps(entry, pickle.HIGHEST_PROTOCOL)
        with self._lock:
            if not self._listening or self._heard != heard:
                return
            if len(self._rows) >= MOST_KEPT:
                now = time.monotonic()
                self._rows = {p: kept for p, kept in self._rows.items() if kept[0] > now}
                if len(self._rows) >= MOST_KEPT:
                    return
            self._rows[prefix] = (time.monotonic() + lifetime, blob)

    def replace(self, prefix: str, entry: Any) -> None:
        """Put a newer copy of a row kept here in its place (a request stamped
        `last_used_at`), keeping its time to live; nothing if it is not kept."""
        blob = pickle.dumps(entry, pickle.HIGHEST_PROTOCOL)
        with self._lock:
            kept = self._rows.get(prefix)
            if kept is not None:
                self._rows[prefix] = (kept[0], blob)

    def forget(self, prefixes: list[str]) -> None:
        """Drop rows this process changed: its own next request must not wait
        for the news to come back from the shared cache."""
        with self._lock:
            for prefix in prefixes:
                self._rows.pop(prefix, None)
            self._heard += 1


def publish_changed(prefixes: list[str], *, cache: Any = default_cache) -> None:
    """Tell every process's `LocalKeys` (this one's at once) that these keys changed."""
    local_keys.forget(prefixes)
    publish = getattr(cache, "publish", None)
    if publish is not None:
        for prefix in prefixes:
            publish(CHANNEL, prefix)


local_keys = LocalKeys()
