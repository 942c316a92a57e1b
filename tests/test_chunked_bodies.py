"""A body sent in chunks (no Content-Length) is read by the request guard
(`memory_project.middleware._read_chunked_body`) where the web server ends the
stream itself, for a request with a valid API key; `tests/reliability/
test_web_worker.py` sends one through gunicorn."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import pytest
from django.test import RequestFactory, override_settings
from gunicorn.http.body import Body, ChunkedReader
from gunicorn.http.unreader import IterUnreader

from accounts.models import ApiKey
from accounts.services import api_key_revoke
from memory_project.middleware import _read_chunked_body
from tests.factories import WorkspaceFactory, make_api_key

pytestmark = pytest.mark.django_db


@pytest.fixture
def key() -> str:
    return make_api_key(WorkspaceFactory())


def _chunked_request(stream, *, key: str | None, terminated: bool = True):
    extra = {"CONTENT_LENGTH": "", "HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input": stream}
    if terminated:
        extra["wsgi.input_terminated"] = True
    if key is not None:
        extra["HTTP_AUTHORIZATION"] = f"Bearer {key}"
    return RequestFactory().generic("POST", "/v1/conversations/c1/messages", content_type="application/json", **extra)


def _gunicorn_body(raw: bytes) -> Body:
    """The stream gunicorn gives the application for a chunked request."""
    request = SimpleNamespace(limit_request_field_size=8190, max_buffer_headers=0)
    return Body(ChunkedReader(request, IterUnreader([raw])))


def test_the_body_is_read_to_its_end(key):
    body = b'{"role": "user", "content": "' + b"x" * 200_000 + b'"}'  # more than one read
    request = _chunked_request(io.BytesIO(body), key=key)
    assert _read_chunked_body(request) is None
    assert request.body == body and request.META["CONTENT_LENGTH"] == str(len(body))


def test_gunicorns_chunks_are_read_as_one_body(key):
    request = _chunked_request(_gunicorn_body(b"4\r\n{\"a\"\r\n3\r\n: 1\r\n1\r\n}\r\n0\r\n\r\n"), key=key)
    assert _read_chunked_body(request) is None
    assert json.loads(request.body) == {"a": 1}


@pytest.mark.parametrize("raw", [
    b"zz\r\nabc\r\n0\r\n\r\n",  # not a chunk size
    b"3\r\nabcXX0\r\n\r\n",  # a chunk without its line end
    b"10\r\nabc",  # the client went away mid-chunk
    b"3;\x01\r\nabc\r\n0\r\n\r\n",  # a control character in an extension
])
def test_a_malformed_or_cut_short_body_is_a_json_400(key, raw):
    response = _read_chunked_body(_chunked_request(_gunicorn_body(raw), key=key))
    assert response.status_code == 400
    assert json.loads(response.content)["error"]["type"] == "invalid_request_error"


def test_a_body_over_the_limit_is_a_json_413(key):
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=100):
        assert _read_chunked_body(_chunked_request(io.BytesIO(b"x" * 100), key=key)) is None
        response = _read_chunked_body(_chunked_request(io.BytesIO(b"x" * 101), key=key))
    assert response.status_code == 413
    assert json.loads(response.content)["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize("presented", ["none", "wrong", "revoked", "malformed"])
def test_without_a_valid_key_the_body_stays_unread(key, presented):
    # Its view answers 401 without reading it, as for a body with a Content-Length.
    if presented == "revoked":
        api_key_revoke(api_key=ApiKey.objects.get(prefix=key.split("_")[1]))
    raw = {"none": None, "wrong": key[:-4] + "abcd", "revoked": key, "malformed": "x"}[presented]
    stream = io.BytesIO(b'{"role": "user"}')
    request = _chunked_request(stream, key=raw)
    if presented == "malformed":
        request.META["HTTP_AUTHORIZATION"] = "Basic abc"
    assert _read_chunked_body(request) is None
    assert stream.tell() == 0 and not request.META["CONTENT_LENGTH"]


def test_a_server_that_does_not_end_the_stream_leaves_it_unread(key):
    # Reading such a stream to its end would wait for the client to hang up.
    stream = io.BytesIO(b'{"role": "user"}')
    request = _chunked_request(stream, key=key, terminated=False)
    assert _read_chunked_body(request) is None
    assert stream.tell() == 0 and not request.META["CONTENT_LENGTH"]
