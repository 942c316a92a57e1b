"""Per-API-key rate limiting: 429 `rate_limit_error` with Retry-After, one
bucket per key whichever header carries it, other keys unaffected."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import path
from rest_framework.response import Response
from rest_framework.test import APIClient
from rest_framework.views import APIView

from accounts.throttling import ApiKeyRateThrottle
from tests.factories import make_api_key

pytestmark = pytest.mark.django_db

LIMIT = 3


class PingView(APIView):
    def get(self, request):
        return Response({"data": "pong"})


urlpatterns = [path("v1/ping", PingView.as_view())]


@pytest.fixture(autouse=True)
def tight_limit(settings, monkeypatch):
    settings.ROOT_URLCONF = __name__
    # The rate is read once from settings at class creation; the instance
    # attribute is what `SimpleRateThrottle` consults on every request.
    monkeypatch.setattr(ApiKeyRateThrottle, "rate", f"{LIMIT}/min", raising=False)
    cache.clear()
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
