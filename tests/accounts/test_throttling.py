"""Per-API-key rate limiting: 429 `rate_limit_error` with Retry-After, one
bucket per key whichever header carries it, other keys unaffected."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import path
from rest_framework.response import Response
from rest_framework.test import APIClient
from rest_framework.views import APIView

from accounts.throttling import ApiKeyRateThrottle, AuthFailureThrottle
from tests.factories import make_api_key

pytestmark = pytest.mark.django_db

LIMIT = 3


class PingView(APIView):
    def get(self, request):
        return Response({"data": "pong"})


urlpatterns = [path("v1/ping", PingView.as_view())]


def away_from_a_window_edge(margin: float, period: int = 60) -> None:
    """Windows are fixed (minutes, hours): start a test's requests well inside
    one, so none of them is counted in the next."""
    import time

    left = period - time.time() % period
    if left < margin:
        time.sleep(left + 0.2)


@pytest.fixture(autouse=True)
def tight_limit(settings, monkeypatch):
    settings.ROOT_URLCONF = __name__
    # The rate is read once from settings at class creation; the instance
    # attribute is what `SimpleRateThrottle` consults on every request.
    monkeypatch.setattr(ApiKeyRateThrottle, "rate", f"{LIMIT}/min", raising=False)
    cache.clear()
    away_from_a_window_edge(5)
    yield
    cache.clear()


def _client(**headers) -> APIClient:
    client = APIClient()
    client.credentials(**headers)
    return client


def test_the_limit_is_per_key_and_answered_429_with_retry_after(workspace):
    raw = make_api_key(workspace)
    client = _client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert [client.get("/v1/ping").status_code for _ in range(LIMIT)] == [200] * LIMIT

    response = client.get("/v1/ping")
    assert response.status_code == 429
    assert response.json()["type"] == "error"
    assert response.json()["error"]["type"] == "rate_limit_error"
    retry_after = int(response["Retry-After"])
    assert 1 <= retry_after <= 61

    # The other header form shares the key's bucket.
    assert _client(HTTP_X_API_KEY=raw).get("/v1/ping").status_code == 429
    # Another key of the same workspace has its own bucket.
    assert _client(HTTP_AUTHORIZATION=f"Bearer {make_api_key(workspace)}").get("/v1/ping").status_code == 200


def test_unauthenticated_requests_are_401_not_counted(workspace):
    raw = make_api_key(workspace)
    anon = APIClient()
    for _ in range(LIMIT + 2):
        assert anon.get("/v1/ping").status_code == 401
    assert _client(HTTP_AUTHORIZATION=f"Bearer {raw}").get("/v1/ping").status_code == 200


def test_the_production_rate_comes_from_the_setting():
    from django.conf import settings

    assert settings.REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"] == ["accounts.throttling.ApiKeyRateThrottle"]
    assert "api_key" in settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]


@pytest.mark.postgres
def test_the_window_lives_in_the_shared_cache(workspace):
    """In production the window is in Redis, shared by every web worker: a
    second process sees the requests the first one counted."""
    from django.conf import settings

    assert settings.CACHES["default"]["BACKEND"].endswith("RedisCache")
    raw = make_api_key(workspace)
    client = _client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    for _ in range(LIMIT):
        client.get("/v1/ping")
    import redis

    keys = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"]).keys("*throttle_api_key*")
    assert keys, "the throttle history should be stored in Redis"


def test_a_wrong_secret_does_not_count_against_the_key(workspace):
    # The hit is counted before the key is checked, on a counter named by the
    # secret's hash: guessing at a key's prefix cannot use up its limit.
    raw = make_api_key(workspace)
    prefix = raw.split("_")[1]
    forged = _client(HTTP_AUTHORIZATION=f"Bearer mk_{prefix}_" + "y" * 43)
    for _ in range(LIMIT + 2):
        assert forged.get("/v1/ping").status_code in (401, 429)
    client = _client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert [client.get("/v1/ping").status_code for _ in range(LIMIT + 1)] == [200] * LIMIT + [429]


# --- Missing and wrong keys ---------------------------------------------------------


@pytest.fixture
def tight_failure_limit(monkeypatch):
    monkeypatch.setattr(AuthFailureThrottle, "rate", f"{LIMIT}/min", raising=False)


def test_missing_and_wrong_keys_are_throttled_per_address(workspace, tight_failure_limit):
    anon = APIClient()
    wrong = _client(HTTP_AUTHORIZATION="Bearer mk_ffffffffffff_" + "x" * 43)
    malformed = _client(HTTP_AUTHORIZATION="Basic abc")
    statuses = [client.get("/v1/ping").status_code for client in (anon, wrong, malformed, anon, wrong)]
    assert statuses == [401, 401, 401, 429, 429]
    response = wrong.get("/v1/ping")
    assert response.json()["error"]["type"] == "rate_limit_error"
    assert 1 <= int(response["Retry-After"]) <= 61
    # A good key from the same address is not held back by others' failures.
    assert _client(HTTP_AUTHORIZATION=f"Bearer {make_api_key(workspace)}").get("/v1/ping").status_code == 200


def test_another_address_has_its_own_failure_window(workspace, tight_failure_limit):
    anon = APIClient()
    for _ in range(LIMIT):
        anon.get("/v1/ping")
    assert anon.get("/v1/ping").status_code == 429
    assert APIClient(REMOTE_ADDR="10.0.0.9").get("/v1/ping").status_code == 401


@pytest.mark.postgres
def test_the_window_counter_lives_from_its_first_hit(workspace):
    """The counter expires a window's length after its first hit: later hits
    count on it without pushing its end back."""
    import redis
    from django.conf import settings

    from accounts.throttling import window_hit

    server = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])
    counter = f"window-{workspace.pk}"
    assert window_hit(counter, 100) == 1
    name = cache.make_key(counter)
    server.expire(name, 30)  # as if 70 seconds had passed
    assert window_hit(counter, 100) == 2
    assert 0 < server.ttl(name) <= 30


# --- The embedded mode: one window for every gunicorn worker ------------------------


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_gunicorn_workers_share_one_window_without_a_cache_server(workspace, tmp_path):
    """Without CACHE_URL, two gunicorn workers answering at the same time
    count against one window: 5/hour lets exactly 5 requests through, and 5
    failed authentications are all the address gets."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    import httpx
    from django.db import connection

    from tests.celery_worker import worker_database_url
    from tests.web_server import gunicorn

    raw = make_api_key(workspace)
    env = {**os.environ, "API_RATE_LIMIT": "5/hour", "API_AUTH_FAILURE_RATE": "5/hour", "LOG_LEVEL": "WARNING",
           "CACHE_DIR": str(tmp_path / "cache")}
    env.pop("CACHE_URL", None)
    if connection.vendor == "sqlite":
        env["SQLITE_PATH"] = connection.settings_dict["NAME"]
    else:
        env["DATABASE_URL"] = worker_database_url()
    away_from_a_window_edge(60, period=3600)  # the server's start and the requests fit in one window
    # One thread per worker, one request at a time each: concurrent requests must be
    # spread over both.
    with gunicorn("--workers", "2", "--threads", "1", env=env) as (_, port):
        base = f"http://127.0.0.1:{port}/v1/conversations"

        def get(headers: dict[str, str]) -> int:
            with httpx.Client(timeout=30) as http:  # a new connection each time
                return http.get(base, headers=headers).status_code

        with ThreadPoolExecutor(6) as pool:
            good = list(pool.map(get, [{"Authorization": f"Bearer {raw}"}] * 12))
            bad = list(pool.map(get, [{"Authorization": "Bearer mk_ffffffffffff_" + "y" * 43}] * 12))
        assert sorted(good) == [200] * 5 + [429] * 7
        assert sorted(bad) == [401] * 5 + [429] * 7
