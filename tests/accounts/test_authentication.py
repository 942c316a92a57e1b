"""API-key authentication through a real DRF view: who gets in, who gets 401,
that the digest comparison always runs, and that no secret reaches a log."""

from __future__ import annotations

import logging

import pytest
from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import selectors
from accounts.models import ApiKey
from accounts.services import api_key_create, api_key_revoke
from tests.factories import make_api_key

pytestmark = pytest.mark.django_db


class WhoAmIView(APIView):
    def get(self, request):
        return Response({"data": {"workspace": request.auth.workspace_id, "read_only": request.auth.read_only}})

    def post(self, request):
        return Response({"data": request.data}, status=201)


class BoomView(APIView):
    def get(self, request):
        raise RuntimeError("unexpected failure")


urlpatterns = [path("v1/whoami", WhoAmIView.as_view()), path("v1/boom", BoomView.as_view())]
handler500 = "memory_project.middleware.server_error"


@pytest.fixture(autouse=True)
def probe_urls(settings):
    settings.ROOT_URLCONF = __name__


def _error_type(response) -> str:
    return response.json()["error"]["type"]


def test_bearer_and_x_api_key_both_authenticate(anon_api, workspace, api_key):
    response = anon_api.get("/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {api_key}")
    assert response.status_code == 200 and response.json()["data"]["workspace"] == workspace.pk
    response = anon_api.get("/v1/whoami", HTTP_X_API_KEY=api_key)
    assert response.status_code == 200 and response.json()["data"]["workspace"] == workspace.pk


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"HTTP_AUTHORIZATION": "Bearer"},
        {"HTTP_AUTHORIZATION": "Bearer "},
        {"HTTP_AUTHORIZATION": "Basic dXNlcjpwYXNz"},
        {"HTTP_AUTHORIZATION": "Token mk_000000000000_abc"},
        {"HTTP_AUTHORIZATION": "Bearer not-a-key"},
        {"HTTP_AUTHORIZATION": "Bearer mk_000000000000_unknown"},
        {"HTTP_AUTHORIZATION": "Bearer mk_short_x"},
        {"HTTP_AUTHORIZATION": "Bearer " + "x" * 10_000},
        {"HTTP_AUTHORIZATION": "Bearer mk_ü00000000000_é"},
        {"HTTP_X_API_KEY": "mk_000000000000_unknown"},
        {"HTTP_X_API_KEY": "   "},
    ],
)
def test_missing_or_malformed_keys_are_401(anon_api, workspace, headers):
    make_api_key(workspace)
    for method in ("get", "post"):
        response = getattr(anon_api, method)("/v1/whoami", format="json", **headers)
        assert response.status_code == 401, (headers, response.content)
        assert _error_type(response) == "authentication_error"
        assert response["WWW-Authenticate"].startswith("Bearer")


def test_revoked_key_is_401_everywhere(anon_api, workspace):
    created = api_key_create(workspace=workspace, name="agent")
    assert anon_api.get("/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {created.raw_key}").status_code == 200
    api_key_revoke(api_key=created.api_key)
    for headers in ({"HTTP_AUTHORIZATION": f"Bearer {created.raw_key}"}, {"HTTP_X_API_KEY": created.raw_key}):
        response = anon_api.get("/v1/whoami", **headers)
        assert response.status_code == 401 and _error_type(response) == "authentication_error"


def test_wrong_secret_for_a_real_prefix_is_401(anon_api, workspace, api_key):
    forged = api_key[:-4] + ("AAAA" if not api_key.endswith("AAAA") else "BBBB")
    response = anon_api.get("/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {forged}")
    assert response.status_code == 401


def test_read_only_key_may_read_but_not_write(readonly_api):
    assert readonly_api.get("/v1/whoami").json()["data"]["read_only"] is True
    response = readonly_api.post("/v1/whoami", {"a": 1}, format="json")
    assert response.status_code == 403 and _error_type(response) == "permission_error"


class _DigestSpy:
    """Wraps the real `hmac.compare_digest` and records its argument lengths."""

    def __init__(self, real):
        self.real = real
        self.calls: list[tuple[int, int]] = []

    def __call__(self, a, b):
        self.calls.append((len(a), len(b)))
        return self.real(a, b)


@pytest.fixture
def digest_spy(monkeypatch):
    spy = _DigestSpy(selectors.hmac.compare_digest)
    monkeypatch.setattr(selectors.hmac, "compare_digest", spy)
    return spy


def test_comparison_runs_whether_or_not_the_prefix_exists(workspace, digest_spy):
    created = api_key_create(workspace=workspace, name="agent")
    unknown_prefix = "mk_ffffffffffff_" + created.raw_key.split("_", 2)[2]
    wrong_secret = created.raw_key[:-2] + ("zz" if not created.raw_key.endswith("zz") else "yy")
    api_key_revoke(api_key=ApiKey.objects.get(pk=created.api_key.pk))
    revoked = created.raw_key
    live = api_key_create(workspace=workspace, name="live").raw_key

    for raw in (unknown_prefix, wrong_secret, revoked, live):
        before = len(digest_spy.calls)
        selectors.api_key_authenticate(raw_key=raw)
        # Exactly one full-length digest comparison per attempt: no early exit
        # on an unknown prefix, a revoked key or a mismatch.
        assert digest_spy.calls[before:] == [(64, 64)], raw


def test_comparison_is_constant_time_primitive():
    # `==` on str short-circuits at the first differing character; the selector
    # must use the constant-time primitive on digests of equal length.
    import inspect

    source = inspect.getsource(selectors.api_key_authenticate)
    assert "compare_digest" in source
    assert "key_hash ==" not in source and "== hash_key_secret" not in source


def _all_log_text(caplog) -> str:
    parts = []
    for record in caplog.records:
        parts.append(record.getMessage())
        parts.append(repr(record.args))
        parts.append(repr(getattr(record, "request", "")))
        if record.exc_info:
            parts.append(logging.Formatter().formatException(record.exc_info))
    return "\n".join(parts) + caplog.text


def test_no_key_or_hash_is_logged_across_requests(anon_api, workspace, caplog):
    caplog.set_level(logging.DEBUG)
    created = api_key_create(workspace=workspace, name="agent")
    raw = created.raw_key
    secret_part = raw.split("_", 2)[2]
    key_hash = created.api_key.key_hash
    forged = raw[:-3] + ("qqq" if not raw.endswith("qqq") else "www")

    anon_api.get("/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {raw}")
    anon_api.post("/v1/whoami", b"{bad json", content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {raw}")
    anon_api.get("/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {forged}")
    anon_api.get("/v1/whoami", HTTP_X_API_KEY=forged)
    anon_api.get("/v1/whoami", HTTP_AUTHORIZATION=f"Basic {raw}")
    api_key_revoke(api_key=created.api_key)
    anon_api.get("/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {raw}")
    anon_api.raise_request_exception = False
    response = anon_api.get("/v1/boom", HTTP_AUTHORIZATION=f"Bearer {make_api_key(workspace)}")
    assert response.status_code == 500

    text = _all_log_text(caplog)
    assert caplog.records, "requests should have logged something (401s, the 500)"
    for needle in (raw, secret_part, key_hash, forged, forged.split("_", 2)[2]):
        assert needle not in text


def _crash_without_key_in_locals():
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        return type(exc), exc, exc.__traceback__


def test_error_report_of_a_crash_hides_the_authorization_header(rf, workspace, settings):
    from django.views.debug import ExceptionReporter, get_exception_reporter_filter

    raw = make_api_key(workspace)
    request = rf.get("/v1/boom", HTTP_AUTHORIZATION=f"Bearer {raw}", HTTP_X_API_KEY=raw)
    exc_info = _crash_without_key_in_locals()
    reporter = ExceptionReporter(request, *exc_info)
    text = reporter.get_traceback_text()
    html = reporter.get_traceback_html()
    assert "HTTP_AUTHORIZATION" in text  # the header is listed, its value is not
    assert raw not in text and raw not in html
    meta = get_exception_reporter_filter(request).get_safe_request_meta(request)
    assert raw not in repr(meta)


def test_500_is_json_without_traceback(anon_api, workspace):
    anon_api.raise_request_exception = False
    response = anon_api.get("/v1/boom", HTTP_AUTHORIZATION=f"Bearer {make_api_key(workspace)}")
    assert response.status_code == 500
    assert response.json() == {"type": "error", "error": {"type": "api_error", "message": "Internal server error."}}
