"""Rate limits: per API key, and per client address for requests whose key is
missing or wrong.

Fixed windows counted in the shared cache (Redis in production, a diskcache
directory in the embedded mode), so every web worker counts against the same
window: a hit is an atomic increment of the window's counter, created with
the window's lifetime on its first hit (DRF's own throttle reads a pickled
list of timestamps and writes it back: a growing value, and two workers may
each write their own list over the other's).
"""

from __future__ import annotations

import functools
import time

import redis
from django.conf import settings
from django.core.cache import cache as default_cache
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from rest_framework import exceptions
from rest_framework.throttling import SimpleRateThrottle

from accounts.models import ApiKey


def window_hit(key: str, ttl: int, *, cache=default_cache) -> int:
    """Count one hit on the counter `key` (created with `ttl` seconds to
    live); the count including this hit. Atomic on both caches, so every
    worker and host counts against the same window.

    On Redis it is one round trip: `SET NX EX` (the window's lifetime, from
    its first hit) and `INCR`, pipelined; through the cache API it took
    three (`add`, then `incr`'s `EXISTS` and `INCRBY`), and a request pays
    for its throttle on every call. The counter is the cache's own key
    holding a plain integer, so `cache.get` reads it as the cache wrote it."""
    if cache is default_cache and isinstance(caches["default"], RedisCache):
        name = cache.make_and_validate_key(key)
        pipe = _redis(settings.CACHES["default"]["LOCATION"]).pipeline(transaction=False)
        pipe.set(name, 0, ex=ttl, nx=True)
        pipe.incr(name)
        return pipe.execute()[1]
    cache.add(key, 0, ttl)
    try:
        return cache.incr(key)
    except ValueError:  # expired between the two calls
        cache.set(key, 1, ttl)
        return 1


@functools.cache
def _redis(location: str) -> redis.Redis:
    """One client (and connection pool) per process for the cache's server."""
    return redis.Redis.from_url(location)


class FixedWindowThrottle(SimpleRateThrottle):
    """`rate` ("N/period") requests per identity per window; windows start on
    multiples of the period. `Retry-After` is the time to the next window."""

    def allow_request(self, request, view) -> bool:
        if self.rate is None:
            return True
        ident = self.get_cache_key(request, view)
        if ident is None:
            return True
        return self.hit(ident)

    def hit(self, ident: str) -> bool:
        """Count this request against `ident`'s window."""
        now = time.time()
        counter, ttl = self._counter(ident, now)
        count = window_hit(counter, ttl, cache=self.cache)
        self._wait = (now // self.duration + 1) * self.duration - now
        return count <= self.num_requests

    def _counter(self, ident: str, now: float) -> tuple[str, int]:
        return f"{ident}_{int(now // self.duration)}", self.duration + 1

    def wait(self) -> float | None:
        return getattr(self, "_wait", None)


class ApiKeyRateThrottle(FixedWindowThrottle):
    """Requests per API key (`API_RATE_LIMIT`), counted once the key is
    authenticated: a request with a wrong secret counts against no real key."""

    scope = "api_key"

    def get_cache_key(self, request, view):
        api_key = request.auth
        if not isinstance(api_key, ApiKey):
            return None
        return self.cache_format % {"scope": self.scope, "ident": api_key.pk}


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
