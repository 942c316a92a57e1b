"""The web server under gunicorn with the project's config (gunicorn's
threaded worker): chains of requests on one connection, more clients than
threads, a client that pipelines, one that hangs up, and a stop with
connections still open."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
from django.db import connection

from tests.celery_worker import worker_database_url
from tests.factories import WorkspaceFactory, make_api_key
from tests.web_server import gunicorn

pytestmark = pytest.mark.slow  # starts processes of its own

@pytest.fixture
def web(tmp_path):
    """gunicorn with the project's config: one worker of 2 threads, and an
    API key it accepts (`web.key`).

    On SQLite the server runs on a copy of the test database taken as it
    starts, never on the test's own file: that file then stays this test
    process's alone for the rest of its tests. (With the server on the
    test's file, a later connect of the test process failed with "disk I/O
    error", and so did every test after it, in about half of the full runs
    with the browser tests; never when run alone.)"""
    key = make_api_key(WorkspaceFactory())
    env = {**os.environ, "LOG_LEVEL": "WARNING", "CACHE_DIR": str(tmp_path / "cache")}
    env.pop("CACHE_URL", None)
    if connection.vendor == "sqlite":
        database = tmp_path / "web.sqlite3"
        connection.ensure_connection()
        with contextlib.closing(sqlite3.connect(database)) as copy:
            connection.connection.backup(copy)
        env["SQLITE_PATH"] = str(database)
    else:
        env["DATABASE_URL"] = worker_database_url()
    log = tmp_path / "gunicorn.log"
    with gunicorn("--workers", "1", "--threads", "2", "--graceful-timeout", "20", env=env, log=log) as (server, port):
        yield SimpleNamespace(port=port, process=server, log=log, key=key)
    assert "Traceback" not in log.read_text()


def _get(conn: http.client.HTTPConnection, path: str, headers: dict | None = None) -> tuple[int, bytes]:
    conn.request("GET", path, headers=headers or {})
    response = conn.getresponse()
    return response.status, response.read()


committed = pytest.mark.django_db(transaction=True)  # the server (or its copy) reads what the test committed


@committed
def test_a_chain_of_calls_on_one_connection(web):
    conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
    try:
        assert _get(conn, "/favicon.ico")[0] == 200
        sock = conn.sock
        auth = {"Authorization": f"Bearer {web.key}"}
        for n in range(30):
            path = "/v1/conversations" if n % 2 else "/favicon.ico"
            status, _ = _get(conn, path, auth)
            assert status == 200
        assert conn.sock is sock  # every answer kept the connection open
    finally:
        conn.close()


@committed
def test_more_clients_than_threads_are_all_answered(web):
    """Five clients, two threads, each client a chain of keep-alive calls
    (the case lingering must not starve), and some clients new each time."""

    def chain(client: int) -> list[int]:
        statuses = []
        for n in range(20):
            conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
            try:
                for _ in range(1 if client % 2 else 5):  # odd clients connect anew for every call
                    statuses.append(_get(conn, f"/favicon.ico?c={client}&n={n}")[0])
            finally:
                conn.close()
        return statuses

    with ThreadPoolExecutor(5) as pool:
        answers = list(pool.map(chain, range(5)))
    assert [len(a) for a in answers] == [100, 20, 100, 20, 100]
    assert {status for a in answers for status in a} == {200}


@committed
def test_pipelined_requests_and_a_client_that_hangs_up(web):
    with socket.create_connection(("127.0.0.1", web.port), timeout=30) as sock:
        sock.sendall(b"GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 3)  # three at once, in one write
        received = b""
        while received.count(b"HTTP/1.1 200") < 3:
            chunk = sock.recv(65536)
            assert chunk, received
            received += chunk
    # Gone before its next request: the thread it left behind serves others.
    with socket.create_connection(("127.0.0.1", web.port), timeout=30) as sock:
        sock.sendall(b"GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
    conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
    try:
        assert [_get(conn, "/favicon.ico")[0] for _ in range(5)] == [200] * 5
    finally:
        conn.close()


@committed
def test_a_body_sent_in_chunks_is_read_whole(web):
    """A client that streams its body (`Transfer-Encoding: chunked`, no
    Content-Length) is answered for the body it sent, not for an empty one."""
    body = json.dumps({"messages": [{"role": "user", "content": f"part {n} " + "x" * 50_000} for n in range(3)]})
    pieces = (body[start:start + 7_000].encode() for start in range(0, len(body), 7_000))
    auth = {"Authorization": f"Bearer {web.key}", "Content-Type": "application/json"}
    conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
    try:
        conn.request("POST", "/v1/conversations/streamed/messages", body=pieces, headers=auth, encode_chunked=True)
        response = conn.getresponse()
        assert response.status == 201, response.read()
        assert [m["floor_no"] for m in json.loads(response.read())["data"]] == [1, 2, 3]
        status, page = _get(conn, "/v1/conversations/streamed/messages", auth)
        assert status == 200
        assert [m["content"][:7] for m in json.loads(page)["data"]] == ["part 0 ", "part 1 ", "part 2 "]
    finally:
        conn.close()


@committed
def test_a_malformed_chunked_body_is_a_json_400(web):
    head = (f"POST /v1/conversations/broken/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {web.key}\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", web.port), timeout=30) as sock:
        sock.sendall(head + b"zz\r\n{}\r\n0\r\n\r\n")
        received = b""
        while not received.endswith(b"\r\n0\r\n\r\n"):  # the answer's last chunk
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"Content-Type: application/json" in head, received
    assert b'"type": "invalid_request_error"' in body, received


@committed
def test_a_stop_with_connections_kept_alive(web):
    """SIGTERM while two clients hold kept-alive connections: the server stops
    (gthread's graceful stop, not the 20 s graceful timeout)."""
    conns = [http.client.HTTPConnection("127.0.0.1", web.port, timeout=30) for _ in range(2)]
    try:
        for conn in conns:
            assert _get(conn, "/favicon.ico")[0] == 200
        web.process.send_signal(signal.SIGTERM)
        web.process.wait(timeout=15)
        assert web.process.returncode == 0
    finally:
        for conn in conns:
            conn.close()
