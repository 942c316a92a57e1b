"""Key rows kept in each web process and rate windows counted in leases: an
authenticated request costs no cache round trip most of the time, a change
to a key is still seen by the next request in every process, and no more
requests than the limit are let through."""

from __future__ import annotations

import select
import time

import pytest
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from accounts.local_keys import CHANNEL, LocalKeys, local_keys
from accounts.models import ApiKey
from accounts.selectors import api_key_authenticate, api_key_authenticate_counted, api_key_changed_key
from accounts.services import api_key_create, api_key_revoke, hash_key_secret
from accounts.throttling import LEASE_MOST, LEASE_SHARE, ApiKeyRateThrottle, WindowLeases
from memory_project.cache import read_and_count

pytestmark = pytest.mark.django_db

redis_only = pytest.mark.postgres  # the production configuration: Redis, with publish/subscribe


def _commands(monkeypatch) -> list[bytes]:
    """Every command sent to Redis from here on (on any connection)."""
    import redis.connection

    sent: list[bytes] = []
    real = redis.connection.Connection.send_packed_command

    def spy(self, command, check_health=True):
        sent.append(b"".join(command) if isinstance(command, list) else command)
        return real(self, command, check_health)

    monkeypatch.setattr(redis.connection.Connection, "send_packed_command", spy)
    return sent


def _listening(keys: LocalKeys = local_keys) -> None:
    """Wait until the process's subscription is confirmed (the first lookups
    after it starts go to the shared cache)."""
    deadline = time.monotonic() + 5
    while not keys._listening:
        assert time.monotonic() < deadline, "the subscription was never confirmed"
        keys.get("warm-up")
        time.sleep(0.01)


def _rate(rate: str, monkeypatch) -> ApiKeyRateThrottle:
    monkeypatch.setattr(ApiKeyRateThrottle, "rate", rate, raising=False)
    return ApiKeyRateThrottle()


def _changed_elsewhere(prefix: str) -> None:
    """What another process's change does: the shared cache's change time and
    the news published, with this process's kept row left alone."""
    cache.set(api_key_changed_key(prefix), time.time(), settings.API_KEY_CACHE_SECONDS + 60)
    cache.publish(CHANNEL, prefix)


def _news_arrived(keys: LocalKeys = local_keys) -> None:
    """Wait until what Redis sent last (news, or the end of a connection it
    closed) is on this process's subscription socket, unread. Redis answers
    the publisher and writes to the subscribers in the same turn of its loop,
    not in a set order: the promise is a change seen by every request that
    starts after its news reached the process."""
    readable, _, _ = select.select([keys._subscription.connection._sock], [], [], 5)
    assert readable, "the news never came"


@redis_only
def test_each_request_gets_its_own_copy_of_a_kept_row_and_its_workspace(workspace, django_assert_num_queries):
    raw = api_key_create(workspace=workspace, name="k").raw_key
    _listening()
    first = api_key_authenticate(raw_key=raw)  # reads and keeps the row
    kept = api_key_authenticate(raw_key=raw)
    assert kept is not first and local_keys.get(first.prefix)[0] is not None
    stored = ApiKey.objects.select_related("workspace").get(pk=first.pk)
    fields = [f.attname for f in ApiKey._meta.concrete_fields]
    assert [getattr(kept, name) for name in fields] == [getattr(stored, name) for name in fields]
    assert not kept._state.adding and kept._state.db == stored._state.db
    with django_assert_num_queries(0):
        assert kept.workspace.name == workspace.name and kept.workspace.slug == workspace.slug
    # What one request stamps on its copy, the next copy does not carry.
    kept.last_used_at = timezone.now()
    kept.workspace.name = "changed by a request"
    again = api_key_authenticate(raw_key=raw)
    assert again is not kept and again.last_used_at == stored.last_used_at
    assert again.workspace is not kept.workspace and again.workspace.name == workspace.name


@redis_only
def test_a_kept_row_and_a_leased_hit_cost_no_round_trip(workspace, monkeypatch):
    raw = api_key_create(workspace=workspace, name="k").raw_key
    rate = _rate("100000/min", monkeypatch)  # leases of LEASE_MOST hits
    _listening()
    assert api_key_authenticate_counted(raw_key=raw, rate=rate)[0] is not None  # reads and keeps the row
    sent = _commands(monkeypatch)
    hits = [api_key_authenticate_counted(raw_key=raw, rate=rate)[1].count for _ in range(3 * LEASE_MOST)]
    counting = [c for c in sent if b"EVALSHA" in c]
    # A lease is counted every LEASE_MOST requests, and carries no key lookup (the row is kept).
    assert len(counting) == 3 and all(b"api_key:" not in c for c in counting)
    assert [c for c in sent if b"EVALSHA" not in c] == []  # nothing else but reading the subscription
    # Each request has its own hit on the window, numbered as if counted alone.
    assert len(set(hits)) == len(hits) and max(hits) <= 4 * LEASE_MOST


@redis_only
def test_a_change_made_in_another_process_is_seen_on_the_next_request(workspace):
    created = api_key_create(workspace=workspace, name="k")
    _listening()
    assert api_key_authenticate(raw_key=created.raw_key) is not None
    assert local_keys.get(created.api_key.prefix)[0] is not None  # kept here now
    ApiKey.objects.filter(pk=created.api_key.pk).update(revoked_at=timezone.now())  # behind this process's signals
    _changed_elsewhere(created.api_key.prefix)
    _news_arrived()
    assert api_key_authenticate(raw_key=created.raw_key) is None


@redis_only
def test_a_change_made_here_is_seen_at_once_without_waiting_for_the_news(workspace, monkeypatch):
    created = api_key_create(workspace=workspace, name="k")
    _listening()
    assert api_key_authenticate(raw_key=created.raw_key) is not None
    # Even were the published news slow to come back, this process drops its own row.
    from memory_project.cache import RedisCache

    monkeypatch.setattr(RedisCache, "publish", lambda self, channel, message: None)
    api_key_revoke(api_key=ApiKey.objects.get(pk=created.api_key.pk))
    assert api_key_authenticate(raw_key=created.raw_key) is None


@redis_only
def test_a_lost_subscription_trusts_no_kept_row(workspace, monkeypatch):
    """News published while the subscription's connection is down is lost:
    once the loss is noticed, lookups go to the shared cache again (which
    has the change), and rows are kept again only after a new subscription
    is confirmed."""
    import redis

    from accounts import local_keys as module

    monkeypatch.setattr(module, "RESUBSCRIBE_SECONDS", 0.05)
    created = api_key_create(workspace=workspace, name="k")
    prefix = created.api_key.prefix
    _listening()
    assert api_key_authenticate(raw_key=created.raw_key) is not None
    assert local_keys.get(prefix)[0] is not None
    server = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])
    host, port = local_keys._subscription.connection._sock.getsockname()[:2]
    assert server.client_kill(f"{host}:{port}")
    _news_arrived()  # the connection's end
    ApiKey.objects.filter(pk=created.api_key.pk).update(revoked_at=timezone.now())
    _changed_elsewhere(prefix)  # published to nobody (of this process)
    assert api_key_authenticate(raw_key=created.raw_key) is None
    _listening()  # subscribed again, after the pause
    assert api_key_authenticate(raw_key=created.raw_key) is None
    assert local_keys.get(prefix)[0].api_key.revoked_at is not None  # the row kept now is the new one


@redis_only
def test_a_row_read_before_a_change_is_not_kept_after_the_news(workspace):
    """A lookup reads the shared cache, then the news of a change is heard
    (by another request of this process) before the lookup keeps what it
    read: the row is not kept, as it may predate the change."""
    from accounts.selectors import CachedKey

    created = api_key_create(workspace=workspace, name="k")
    prefix = created.api_key.prefix
    _listening()

    def row() -> CachedKey:
        return CachedKey(time.time(), ApiKey.objects.select_related("workspace").get(prefix=prefix))

    _, heard = local_keys.get(prefix)
    late = row()
    _changed_elsewhere(prefix)
    deadline = time.monotonic() + 5
    while local_keys.get("another-prefix")[1] == heard:  # another request hears the news
        assert time.monotonic() < deadline, "the news never came"
        time.sleep(0.01)
    local_keys.keep(prefix, late, heard=heard)
    assert local_keys.get(prefix)[0] is None
    # A row read after the news is kept.
    _, heard = local_keys.get(prefix)
    local_keys.keep(prefix, row(), heard=heard)
    assert local_keys.get(prefix)[0] is not None


@redis_only
def test_a_stamp_made_from_a_row_read_before_a_change_does_not_replace_a_newer_row(workspace):
    """A request stamps `last_used_at` on the row it read; meanwhile the key
    is revoked and another request keeps the revoked row: the late stamp
    must not put the old row back."""
    created = api_key_create(workspace=workspace, name="k")
    prefix = created.api_key.prefix
    _listening()
    assert api_key_authenticate(raw_key=created.raw_key) is not None
    stamped = local_keys.get(prefix)[0]  # the first request's row, stamped below
    stamped.api_key.last_used_at = timezone.now()
    ApiKey.objects.filter(pk=created.api_key.pk).update(revoked_at=timezone.now())
    _changed_elsewhere(prefix)
    deadline = time.monotonic() + 5
    while api_key_authenticate(raw_key=created.raw_key) is not None:  # the news, then the revoked row kept
        assert time.monotonic() < deadline, "the revoke was never seen"
        time.sleep(0.01)
    local_keys.replace(prefix, stamped)
    assert api_key_authenticate(raw_key=created.raw_key) is None


@redis_only
def test_keys_are_made_and_revoked_when_the_redis_user_may_not_publish(workspace, monkeypatch):
    from redis.exceptions import NoPermissionError

    from memory_project.cache import RedisCache

    def refused(self, channel, message):
        raise NoPermissionError("this user has no permissions to access one of the channels")

    monkeypatch.setattr(RedisCache, "publish", refused)
    created = api_key_create(workspace=workspace, name="k")
    assert api_key_authenticate(raw_key=created.raw_key) is not None
    api_key_revoke(api_key=ApiKey.objects.get(pk=created.api_key.pk))
    assert api_key_authenticate(raw_key=created.raw_key) is None


class _CacheWithoutServer:
    """A cache whose server cannot be subscribed to."""

    def __init__(self, error: Exception):
        self.error, self.attempts = error, 0

    def subscription(self, channel):
        self.attempts += 1
        raise self.error


def test_a_subscription_that_fails_is_not_tried_on_every_request():
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import NoPermissionError

    down = _CacheWithoutServer(RedisConnectionError("Connection refused"))
    keys = LocalKeys(down)
    assert [keys.get("prefix") for _ in range(50)] == [(None, -1)] * 50
    assert down.attempts == 1  # again after RESUBSCRIBE_SECONDS
    refused = _CacheWithoutServer(NoPermissionError("no channels for this user"))
    keys = LocalKeys(refused)
    for _ in range(50):
        keys.get("prefix")
    assert refused.attempts == 1 and keys._retry_at == float("inf")  # not a pause: never again


@pytest.mark.django_db(transaction=True)
@redis_only
def test_a_revoke_is_seen_by_every_gunicorn_worker_on_the_next_request(workspace):
    """Two workers, each keeping the key's row: the revoke (in this process)
    is effective for the very next request, whichever worker answers it."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from tests.celery_worker import worker_database_url
    from tests.web_server import gunicorn

    created = api_key_create(workspace=workspace, name="k")
    # Failed authentications are counted per client address in the shared
    # cache, where other tests' (and earlier runs') failures from 127.0.0.1
    # in the same minute count too: this test's 60 must be answered 401, not 429.
    env = {**os.environ, "LOG_LEVEL": "WARNING", "DATABASE_URL": worker_database_url(),
           "API_AUTH_FAILURE_RATE": "100000/min"}
    with gunicorn("--workers", "2", "--threads", "1", env=env) as (_, port):
        url = f"http://127.0.0.1:{port}/v1/conversations"
        headers = {"Authorization": f"Bearer {created.raw_key}"}

        def status(_: int) -> int:
            # A new connection each time; several at once, so both workers answer.
            return httpx.get(url, headers=headers, timeout=30).status_code

        deadline = time.monotonic() + 60
        while status(0) != 200:  # the server is up and answering
            assert time.monotonic() < deadline
            time.sleep(0.2)
        with ThreadPoolExecutor(4) as pool:
            assert list(pool.map(status, range(60))) == [200] * 60  # both workers keep the row by now
            api_key_revoke(api_key=ApiKey.objects.get(pk=created.api_key.pk))
            assert list(pool.map(status, range(60))) == [401] * 60


def test_leases_never_let_more_than_the_limit_through(workspace):
    """Two processes' leases on one window: every request let through has a
    hit within the limit, and the window is refused only once it is
    (nearly) used up."""
    limit = 10 * LEASE_SHARE
    counter, ident = f"leases-{workspace.pk}", f"ident-{workspace.pk}"
    processes = [WindowLeases(), WindowLeases()]
    admitted, first_refused = [], None
    for request in range(2 * limit):
        leases = processes[request % 2]
        hit = leases.take(ident, counter)
        if hit is None:
            hits = leases.size(ident, counter, limit)
            hit = leases.granted(ident, counter, read_and_count(cache, (), counter, 60, hits=hits)[1], hits)
        if hit <= limit:
            admitted.append(hit)
        elif first_refused is None:
            first_refused = len(admitted)
    # Each hit within the limit went to exactly one request, none beyond it.
    assert sorted(admitted) == list(range(1, limit + 1))
    # Refused early only while the other process held hits it had not used yet.
    assert first_refused >= limit - LEASE_MOST


def test_a_window_near_its_limit_counts_every_hit(workspace):
    leases = WindowLeases()
    assert leases.size("ident", "counter-1", LEASE_SHARE - 1) == 1
    assert leases.size("ident", "counter-1", 100 * LEASE_SHARE) == LEASE_MOST
    # After a count that left little of the limit, the next lease is small.
    leases.granted("ident", "counter-1", count=3 * LEASE_SHARE, hits=LEASE_MOST)
    assert leases.size("ident", "counter-1", 4 * LEASE_SHARE) == 1
    # A new window starts from its whole limit again.
    assert leases.size("ident", "counter-2", 4 * LEASE_SHARE) == 4


def test_leases_held_at_once_are_bounded(monkeypatch):
    from accounts import throttling

    monkeypatch.setattr(throttling, "MOST_LEASES", 3)
    leases = WindowLeases()
    for ident in ("a", "b", "c"):
        assert leases.granted(ident, "counter", count=10, hits=5) == 6
    assert leases.take("a", "counter") == 7
    # A fourth identity drops the lease granted longest ago.
    leases.granted("d", "counter", count=20, hits=5)
    assert leases.take("a", "counter") is None
    assert leases.take("b", "counter") == 7
    assert leases.take("d", "counter") == 17


def test_threads_counting_at_once_each_add_to_the_lease(workspace):
    """Threads of one process whose lease runs out at the same moment each
    count hits: all of them are handed out, none lost, so the window lets
    through exactly its limit."""
    from concurrent.futures import ThreadPoolExecutor

    limit = 40 * LEASE_SHARE
    counter, ident = f"threads-{workspace.pk}-{time.time_ns()}", "ident"
    leases = WindowLeases()

    def request(_: int) -> int:
        hit = leases.take(ident, counter)
        if hit is None:
            hits = leases.size(ident, counter, limit)
            hit = leases.granted(ident, counter, read_and_count(cache, (), counter, 120, hits=hits)[1], hits)
        return hit

    with ThreadPoolExecutor(8) as pool:
        hits = list(pool.map(request, range(2 * limit)))
    assert sorted(hit for hit in hits if hit <= limit) == list(range(1, limit + 1))


def test_the_windows_first_count_coming_back_after_a_later_one_keeps_both():
    """Two threads count at once; the server numbers the first one's hits
    first, but its answer is granted second: no hit is lost (the window lets
    its whole limit through), and none is taken for a restarted counter's."""
    leases = WindowLeases()
    first_hits = leases.size("ident", "counter", 100 * LEASE_SHARE)
    later_hits = leases.size("ident", "counter", 100 * LEASE_SHARE)
    assert leases.granted("ident", "counter", count=first_hits + later_hits, hits=later_hits) == first_hits + 1
    assert leases.granted("ident", "counter", count=first_hits, hits=first_hits) == 1
    taken = [leases.take("ident", "counter") for _ in range(first_hits + later_hits - 1)]
    assert taken == [*range(2, first_hits + 1), *range(first_hits + 2, first_hits + later_hits + 1), None]


def test_a_count_that_failed_is_no_longer_under_way():
    leases = WindowLeases()
    leases.size("ident", "counter", 100 * LEASE_SHARE)
    leases.not_counted("ident")
    # Counted alone later, then the counter starts again: the old hits are dropped.
    assert leases.granted("ident", "counter", count=64, hits=32) == 33
    assert leases.granted("ident", "counter", count=32, hits=32) == 1
    assert leases.take("ident", "counter") == 2


def test_a_counter_that_starts_again_drops_the_hits_leased_on_it():
    leases = WindowLeases()
    assert leases.granted("ident", "counter", count=64, hits=32) == 33
    # The cache server restarted: the counter answers from 1 again.
    assert leases.granted("ident", "counter", count=32, hits=32) == 1
    assert [leases.take("ident", "counter") for _ in range(32)] == [*range(2, 33), None]


def test_a_refused_secret_keeps_no_lease(workspace, monkeypatch):
    from accounts.throttling import window_leases

    raw = api_key_create(workspace=workspace, name="k").raw_key
    rate = _rate("100000/min", monkeypatch)
    forged = raw[:-5] + "zzzzz"
    assert api_key_authenticate_counted(raw_key=forged, rate=rate) == (None, None)
    ident = rate.ident_of(hash_key_secret(forged))
    assert window_leases.take(ident, rate.window_counter(ident)[0]) is None


@redis_only
def test_a_prefix_no_key_has_is_not_kept(workspace):
    _listening()
    raw = "mk_ffffffffffff_" + "x" * 43
    assert api_key_authenticate(raw_key=raw) is None
    assert local_keys.get("ffffffffffff")[0] is None


@redis_only
def test_one_message_tells_of_all_of_a_workspaces_keys(workspace):
    """A workspace's change concerns all its keys: one message names them all."""
    keys = [api_key_create(workspace=workspace, name=f"k{n}") for n in range(2)]
    _listening()
    for created in keys:
        assert api_key_authenticate(raw_key=created.raw_key) is not None
        assert local_keys.get(created.api_key.prefix)[0] is not None
    cache.publish(CHANNEL, " ".join(created.api_key.prefix for created in keys))
    deadline = time.monotonic() + 5
    while any(local_keys.get(created.api_key.prefix)[0] is not None for created in keys):
        assert time.monotonic() < deadline, "the news never came"
        time.sleep(0.01)
