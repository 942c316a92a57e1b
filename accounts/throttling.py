"""Rate limits: per API key, and per client address for requests whose key is
missing or wrong.

Fixed windows counted in the shared cache (Redis in production, the SQLite
cache file in the embedded mode), so every web worker counts against the same
window. A hit is an `INCRBY` of the window's counter, which is given its
`EXPIRE` on the first hit (DRF's own throttle reads a pickled list of
timestamps and writes it back: two round trips and a growing value); a key's
hit travels with its lookup, so an authenticated request costs at most one
cache round trip in all.

A key's window far from its limit is counted in leases (`WindowLeases`, on
either cache): a process counts several hits at once and hands them to its
next requests, so a busy key costs a round trip every few requests, not
every one.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

from django.core.cache import cache as default_cache
from rest_framework import exceptions
from rest_framework.throttling import SimpleRateThrottle

from accounts.models import ApiKey
from memory_project.cache import read_and_count


@dataclass(frozen=True)
class WindowHit:
    """A request's hit, counted on `counter` (its window's counter), and the count with it."""

    counter: str
    count: int


# A lease is at most this share of what this process last saw left of the
# window's limit, and at most LEASE_MOST hits: near its limit a window is
# counted hit by hit, as with no leases, and requests refused while other
# processes hold unused hits are few (at most LEASE_MOST, or the share, per
# process).
LEASE_SHARE = 64
LEASE_MOST = 32
# The most identities holding a lease in a process: past it, the one leased
# longest ago is dropped (its hits are lost, as at a window's end), so a flood
# of distinct keys cannot grow a process's memory.
MOST_LEASES = 4096


class _Lease:
    __slots__ = ("counter", "ranges", "highest", "started", "overlapped")

    def __init__(self, counter: str):
        self.counter = counter
        self.ranges: list[list[int]] = []  # [next hit's number, last hit's number], lowest first
        self.highest = 0  # the highest count the counter answered
        self.started = False  # holds the counter's first count (numbered from 1)
        self.overlapped = False  # was granted hits while another count of its identity was under way


class WindowLeases:
    """Hits counted ahead on windows' counters, by identity, for this
    process's requests. Each request takes the next hit of its window's
    lease, numbered as the counter numbered it, so the throttle compares it
    to the limit as it would a hit counted alone: no more requests are let
    through than the limit, whatever the leases. Threads that count at the
    same moment each add their hits to the lease. Hits leased and not used
    when their window ends are lost (they counted against a window that is
    over); a lease never outlives its window's counter, nor a counter that
    started again (a cache server restarted: hits numbered before are no
    longer the counter's)."""

    def __init__(self):
        self._after_fork()
        # A forked child counts for itself, with a lock of its own.
        os.register_at_fork(after_in_child=self._after_fork)

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        self._leases: dict[str, _Lease] = {}  # oldest grant first
        # Counts under way (between `size` and `granted`) by identity: their
        # answers may come back in any order.
        self._counting: dict[str, int] = {}

    def take(self, ident: str, counter: str) -> int | None:
        """The number of a hit leased on `counter`, now this request's; None
        when none is left (count `size` hits, then `granted`)."""
        with self._lock:
            lease = self._leases.get(ident)
            if lease is None or lease.counter != counter or not lease.ranges:
                return None
            hit = lease.ranges[0]
            if hit[0] == hit[1]:
                lease.ranges.pop(0)
            hit[0] += 1
            return hit[0] - 1

    def size(self, ident: str, counter: str, limit: int) -> int:
        """How many hits to count on `counter` for the next lease: a share of
        what the counter had left when last counted here (of the limit, for a
        new window). The count is under way from here until `granted`, or
        `not_counted` if it fails: every call needs one of the two."""
        with self._lock:
            lease = self._leases.get(ident)
            left = limit - lease.highest if lease is not None and lease.counter == counter else limit
            self._counting[ident] = self._counting.get(ident, 0) + 1
        return max(1, min(LEASE_MOST, left // LEASE_SHARE))

    def granted(self, ident: str, counter: str, count: int, hits: int) -> int:
        """`hits` hits were counted on `counter`, the last numbered `count`:
        the first is this request's (its number is answered), the rest leased."""
        first = count - hits + 1
        with self._lock:
            others_counting = self._count_ended(ident) > 0
            lease = self._leases.pop(ident, None)
            if lease is None or lease.counter != counter:
                lease = _Lease(counter)  # a new window
            elif first == 1 and (lease.started or not lease.overlapped):
                # Only a counter's first count is numbered from 1: one that
                # starts again (its cache server restarted) numbers anew, and
                # hits leased before would be numbered twice. Unless the
                # lease holds no first count yet and was granted hits while
                # another count was under way: then this is the window's
                # first count, come back after later ones. (Were it a restart
                # after all, a few hits could go out twice, where the restart
                # itself let the whole limit through again.)
                lease = _Lease(counter)
            if len(self._leases) >= MOST_LEASES:
                del self._leases[next(iter(self._leases))]
            self._leases[ident] = lease
            lease.highest = max(lease.highest, count)
            lease.started |= first == 1
            lease.overlapped |= others_counting
            if hits > 1:
                lease.ranges.append([first + 1, count])
                lease.ranges.sort()
        return first

    def not_counted(self, ident: str) -> None:
        """A count `size` was asked for failed (no `granted` follows)."""
        with self._lock:
            self._count_ended(ident)

    def _count_ended(self, ident: str) -> int:
        """One of `ident`'s counts came back: how many are still under way."""
        under_way = self._counting.pop(ident, 0) - 1
        if under_way > 0:
            self._counting[ident] = under_way
        return max(under_way, 0)

    def drop(self, ident: str) -> None:
        """Forget `ident`'s lease (its key was not authenticated: no later
        request of it needs the hits)."""
        with self._lock:
            self._leases.pop(ident, None)


window_leases = WindowLeases()


def window_hit(key: str, ttl: int, *, cache=default_cache) -> int:
    """Count one hit on the counter `key` (created with `ttl` seconds to live);
    the count including this hit."""
    return read_and_count(cache, (), key, ttl)[1]


class FixedWindowThrottle(SimpleRateThrottle):
    """`rate` ("N/period") requests per identity per window; windows start on
    multiples of the period. `Retry-After` is the time to the next window."""

    def allow_request(self, request, view) -> bool:
        if self.rate is None:
            return True
        ident = self.get_cache_key(request, view)
        if ident is None:
            return True
        return self.hit(ident, counted=self.counted_hit(request))

    def counted_hit(self, request) -> WindowHit | None:
        """This request's hit if something counted it already; None: `hit` counts it."""
        return None

    def hit(self, ident: str, *, counted: WindowHit | None = None) -> bool:
        """Count this request against `ident`'s window, unless `counted` is
        this window's hit already counted (by the authentication)."""
        now = time.time()
        counter, ttl = self._counter(ident, now)
        if counted is not None and counted.counter == counter:
            count = counted.count
        else:
            count = window_hit(counter, ttl, cache=self.cache)
        self._wait = (now // self.duration + 1) * self.duration - now
        return count <= self.num_requests

    def window_counter(self, ident: str) -> tuple[str, int] | None:
        """The counter of `ident`'s current window and its time to live; None
        without a rate."""
        return None if self.rate is None else self._counter(ident, time.time())

    def _counter(self, ident: str, now: float) -> tuple[str, int]:
        return f"{ident}_{int(now // self.duration)}", self.duration + 1

    def wait(self) -> float | None:
        return getattr(self, "_wait", None)


class ApiKeyRateThrottle(FixedWindowThrottle):
    """Requests per API key (`API_RATE_LIMIT`). A key's window is counted by
    the authentication, in the cache round trip that reads the key
    (`ApiKeyAuthentication`); this throttle then only compares."""

    scope = "api_key"

    def counted_hit(self, request) -> WindowHit | None:
        return getattr(request, "api_key_window_hit", None)

    def get_cache_key(self, request, view):
        api_key = request.auth
        if not isinstance(api_key, ApiKey):
            return None
        return self.ident_of(api_key.key_hash)

    def ident_of(self, key_hash: str) -> str:
        # Keyed by the secret's hash, known before the key is found: the
        # authentication counts the hit in the same round trip as its lookup,
        # and a request with a wrong secret counts against no real key.
        return self.cache_format % {"scope": self.scope, "ident": key_hash}


class AuthFailureThrottle(FixedWindowThrottle):
    """Requests with a missing, malformed or unknown key, per client address
    (`API_AUTH_FAILURE_RATE`): a client that keeps failing authentication is
    answered 429 instead of costing a key lookup every time."""

    scope = "auth_failure"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def check(self, request) -> None:
        """Count a failed authentication; raise `Throttled` past the limit."""
        if not self.allow_request(request, None):
            raise exceptions.Throttled(self.wait())
