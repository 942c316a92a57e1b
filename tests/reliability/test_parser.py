"""The hardened JSON parser and the request guard, through a real DRF view."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings
from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from memory_project.parsers import decode_json_bytes

pytestmark = pytest.mark.django_db

RECEIVED: list = []


class EchoView(APIView):
    """Records what it parsed, so a refused body provably changed nothing."""

    def post(self, request):
        RECEIVED.append(request.data)
        return Response({"data": request.data})


urlpatterns = [path("v1/echo", EchoView.as_view())]


@pytest.fixture(autouse=True)
def echo_urls(settings):
    settings.ROOT_URLCONF = __name__
    RECEIVED.clear()
    yield


def _post(api, body: bytes, content_type: str = "application/json", **extra):
    return api.generic("POST", "/v1/echo", body, content_type=content_type, **extra)


def _assert_error(response, status: int, code: str = "invalid_request_error"):
    assert response.status_code == status, response.content[:300]
    body = response.json()
    assert body["type"] == "error"
    assert body["error"]["type"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert RECEIVED == []


def test_valid_json_is_parsed(api):
    response = _post(api, json.dumps({"a": [1, {"b": "héllo 你好"}]}).encode())
    assert response.status_code == 200
    assert RECEIVED == [{"a": [1, {"b": "héllo 你好"}]}]


def test_deeply_nested_arrays_are_400_not_500(api):
    _assert_error(_post(api, b"[" * 10_000 + b"]" * 10_000), 400)
    assert "nesting" in _post(api, b"[" * 100 + b"]" * 100).json()["error"]["message"]


def test_nesting_at_the_limit_is_accepted(api, settings):
    settings.JSON_MAX_DEPTH = 10
    assert _post(api, b"[" * 10 + b"]" * 10).status_code == 200
    RECEIVED.clear()
    _assert_error(_post(api, b"[" * 11 + b"]" * 11), 400)
    RECEIVED.clear()
    deep_object = b'{"a":' * 11 + b"1" + b"}" * 11
    _assert_error(_post(api, deep_object), 400)


@pytest.mark.parametrize(
    "body",
    [
        b'{"text": "\xff\xfe"}',  # not UTF-8 at all
        b'{"text": "\xc3"}',  # truncated sequence
        b'{"text": "\xed\xa0\x80"}',  # an encoded surrogate: invalid in UTF-8
        b"\xef\xbb\xbf{}",  # a byte order mark
    ],
)
def test_invalid_utf8_is_400(api, body):
    _assert_error(_post(api, body), 400)


@pytest.mark.parametrize(
    "body", [b'{"x": NaN}', b'{"x": Infinity}', b'{"x": -Infinity}', b"[1e999999]", b'{"a": [-1e400]}']
)
def test_non_finite_numbers_are_refused(api, body):
    _assert_error(_post(api, body), 400)


@pytest.mark.parametrize(
    "body",
    [
        b'{"text": "a\\u0000b"}',
        b'{"a\\u0000": 1}',
        b'{"text": "\\ud800"}',
        b'["\\udfff"]',
    ],
)
def test_unstorable_strings_are_400(api, body):
    _assert_error(_post(api, body), 400)


def test_a_wide_body_is_checked_for_depth_whatever_its_bracket_count(api, settings):
    """Many shallow containers (more brackets than the limit) pass; a deep
    one among them is still refused, with or without escapes in the text."""
    settings.JSON_MAX_DEPTH = 10
    wide = b"[" + b",".join([b'[{"a": [1]}]'] * 30) + b"]"
    assert _post(api, wide).status_code == 200
    RECEIVED.clear()
    deep = b"[" * 11 + b"]" * 11
    _assert_error(_post(api, b"[" + b",".join([b"[[1]]"] * 30 + [deep]) + b"]"), 400)
    _assert_error(_post(api, b'["\\u00e9", ' + b",".join([b"[[1]]"] * 30 + [deep]) + b"]"), 400)


def test_an_unstorable_escape_deep_in_a_large_body_is_found(api):
    rows = [{"role": "user", "content": f"turn {n}", "metadata": {"n": n}} for n in range(100)]
    rows[73]["metadata"]["note"] = "a\u0000b"
    _assert_error(_post(api, json.dumps({"messages": rows}).encode()), 400)


def test_an_escaped_backslash_before_u_is_not_an_escape(api):
    # The text \\u0000 is a backslash and five characters, not NUL.
    assert _post(api, b'{"path": "C:\\\\u0000"}').status_code == 200
    assert RECEIVED == [{"path": "C:\\u0000"}]


def test_valid_surrogate_pair_escape_is_accepted(api):
    assert _post(api, b'{"e": "\\ud83d\\ude00"}').status_code == 200
    assert RECEIVED == [{"e": "\U0001f600"}]


@pytest.mark.parametrize("body", [b"{", b"{'a': 1}", b"[1,]", b'{"a" 1}', b"nul"])
def test_malformed_json_is_400(api, body):
    _assert_error(_post(api, body), 400)


def test_other_charset_is_refused(api):
    _assert_error(_post(api, '{"a": "é"}'.encode("latin-1"), content_type="application/json; charset=latin-1"), 400)


def test_non_json_content_type_is_415(api):
    _assert_error(_post(api, b"a=1", content_type="application/x-www-form-urlencoded"), 415)


def test_oversized_body_is_413_before_parsing(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    _assert_error(_post(api, json.dumps({"text": "x" * 2000}).encode()), 413)


def test_body_longer_than_announced_length_is_cut_at_the_limit(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    from io import BytesIO

    from memory_project.errors import PayloadTooLargeError
    from memory_project.parsers import StrictJSONParser

    with pytest.raises(PayloadTooLargeError):
        StrictJSONParser().parse(BytesIO(b'"' + b"x" * 5000 + b'"'), "application/json", {})


def test_bogus_content_length_is_400(api):
    response = api.generic("POST", "/v1/echo", b"{}", content_type="application/json", CONTENT_LENGTH="abc")
    _assert_error(response, 400)


def test_nul_in_query_or_path_is_400(api):
    _assert_error(api.get("/v1/echo?q=a%00b"), 400)
    _assert_error(api.get("/v1/echo?q=%ff%fe"), 400)
    _assert_error(api.get("/v1/ec%00ho"), 400)


def test_query_with_real_unicode_passes_the_guard(api):
    # Reaches the view (405 for GET), not refused by the guard.
    assert api.get("/v1/echo?q=%E4%BD%A0%E5%A5%BD").status_code == 405


def test_decode_helper_matches_the_parser():
    assert decode_json_bytes(b'{"a": [1, 2]}') == {"a": [1, 2]}


@override_settings(DEBUG=False)
def test_parse_errors_do_not_leak_internals(api):
    response = _post(api, b"[" * 10_000)
    assert "Traceback" not in response.content.decode()
