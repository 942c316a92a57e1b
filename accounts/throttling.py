"""Rate limits: per API key, and per client address for requests whose key is
missing or wrong.

Fixed windows counted in the shared cache (Redis in production, the SQLite
cache file in the embedded mode), so every web worker counts against the same
window. A hit is an `INCR` of the window's counter, which is given its
`EXPIRE` on the first hit (DRF's own throttle reads a pickled list of
timestamps and writes it back: two round trips and a growing value); a key's
hit travels with its lookup, so an authenticated request costs one cache
round trip in all.
"""

from __future__ import annotations

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
