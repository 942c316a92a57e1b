"""A body sent in chunks (no Content-Length) is read by the request guard
(`memory_project.middleware._read_chunked_body`) where the web server ends the
stream itself; `tests/reliability/test_web_worker.py` sends one through gunicorn."""

from __future__ import annotations

import io
import json

from django.test import RequestFactory, override_settings

from memory_project.middleware import _read_chunked_body


def _chunked_request(body: bytes, *, terminated: bool = True):
    extra = {"CONTENT_LENGTH": "", "HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input": io.BytesIO(body)}
    if terminated:
        extra["wsgi.input_terminated"] = True
    return RequestFactory().generic("POST", "/v1/conversations/c1/messages", content_type="application/json", **extra)


def test_the_body_is_read_to_its_end():
    body = b'{"role": "user", "content": "' + b"x" * 200_000 + b'"}'  # more than one read
    request = _chunked_request(body)
    assert _read_chunked_body(request) is None
    assert request.body == body and request.META["CONTENT_LENGTH"] == str(len(body))


def test_a_body_over_the_limit_is_a_json_413():
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=100):
        assert _read_chunked_body(_chunked_request(b"x" * 100)) is None
        response = _read_chunked_body(_chunked_request(b"x" * 101))
    assert response.status_code == 413
    assert json.loads(response.content)["error"]["type"] == "invalid_request_error"


def test_a_server_that_does_not_end_the_stream_leaves_it_unread():
    # Reading such a stream to its end would wait for the client to hang up.
    stream = io.BytesIO(b'{"role": "user"}')
    request = _chunked_request(stream.getvalue(), terminated=False)
    request.META["wsgi.input"] = stream
    assert _read_chunked_body(request) is None
    assert stream.tell() == 0 and not request.META["CONTENT_LENGTH"]
