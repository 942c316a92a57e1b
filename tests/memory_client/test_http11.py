"""The sync client's transport (`memory_client._http11`) against a real HTTP/1.1
server on a local socket: keep-alive, connections the server dropped,
transfer and content encodings, errors as httpx's own transport raises them."""

from __future__ import annotations

import gzip
import json
import logging
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import httpx
import pytest

from memory_client import MemoryClient
from memory_client._http11 import MAX_IDLE_CONNECTIONS, StdlibTransport
from memory_client._transport import Call, RetryPolicy, run_sync
from memory_client.client import _ServiceClient
from memory_client.errors import MemoryConnectionError


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive unless told otherwise

    def log_message(self, *args):
        pass

    def _reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if "Transfer-Encoding" not in (headers or {}):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        server = self.server
        server.requests.append((self.path, self.client_address[1]))
        if self.path == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in (b'{"a": ', b"1}"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        elif self.path == "/gzip":
            self._reply(200, gzip.compress(b'{"zipped": true}'), {"Content-Encoding": "gzip"})
        elif self.path == "/slow":
            time.sleep(1.0)
            self._reply(200, b"{}")
        elif self.path == "/drop-once" and not server.dropped:
            server.dropped = True
            self.close_connection = True  # no answer at all
        elif self.path == "/then-close":
            self._reply(200, b"{}")
            # As a server's keep-alive timeout does, later, on an idle connection.
            self.close_connection = True
        else:
            self._reply(200, json.dumps({"path": self.path, "ua": self.headers["User-Agent"]}).encode(),
                        {"Content-Type": "application/json"})

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.requests.append((self.path, self.client_address[1]))
        self._reply(201, body, {"Content-Type": "application/json"})


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    srv.requests, srv.dropped = [], False
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _client(server, **kwargs) -> httpx.Client:
    host, port = server.server_address
    return httpx.Client(transport=StdlibTransport(), base_url=f"http://{host}:{port}/", **kwargs)


def test_calls_share_one_kept_alive_connection(server):
    with _client(server) as http:
        answers = [http.get(f"/n{n}").json()["path"] for n in range(5)]
        posted = http.post("/p", json={"k": "v" * 10_000})
    assert answers == [f"/n{n}" for n in range(5)]
    assert posted.status_code == 201 and posted.json() == {"k": "v" * 10_000}
    assert len({port for _, port in server.requests}) == 1


def test_a_connection_the_server_closed_while_idle_is_not_reused(server):
    with _client(server) as http:
        assert http.get("/then-close").status_code == 200
        time.sleep(0.05)  # the server's close has arrived
        assert http.get("/after").json()["path"] == "/after"
    first, second = (port for _, port in server.requests)
    assert first != second


def test_a_streamed_body_is_sent_with_its_length(server):
    with _client(server) as http:
        answer = http.post("/streamed", content=iter([b'{"a": ', b"1}"]))
        assert answer.status_code == 201 and answer.json() == {"a": 1}
        assert http.get("/next").json()["path"] == "/next"  # the connection is still in step
        with pytest.raises(httpx.LocalProtocolError):
            http.get("/bad", headers={"X-Bad": "a\r\nInjected: 1"})
    assert [path for path, _ in server.requests] == ["/streamed", "/next"]


def test_transfer_and_content_encodings_are_undone(server):
    with _client(server) as http:
        assert http.get("/chunked").json() == {"a": 1}
        assert http.get("/gzip").json() == {"zipped": True}


def test_errors_are_httpx_errors(server):
    with _client(server, timeout=httpx.Timeout(5.0, read=0.1)) as http:
        with pytest.raises(httpx.ReadTimeout):
            http.get("/slow")
        # The timed-out connection was dropped: the next call gets a new one.
        assert http.get("/fine", timeout=10.0).status_code == 200
        with pytest.raises(httpx.RemoteProtocolError):
            http.get("/drop-once", timeout=10.0)
    slow, fine, _ = (port for _, port in server.requests)
    assert slow != fine
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    with httpx.Client(transport=StdlibTransport(), base_url=f"http://127.0.0.1:{port}") as http, \
            pytest.raises(httpx.ConnectError):
        http.get("/")
    with pytest.raises(MemoryConnectionError):
        MemoryClient(f"http://127.0.0.1:{port}", "k", max_retries=0).list_conversations()


def test_the_retry_policy_sees_a_dropped_connection_as_transient(server):
    # A GET the server dropped without answering is tried again, on a new connection.
    with _client(server) as http:
        answer = run_sync(http, Call("GET", "drop-once"), RetryPolicy(max_retries=1, backoff=0))
    assert answer == {"path": "/drop-once", "ua": "python-httpx/" + httpx.__version__}
    assert [path for path, _ in server.requests] == ["/drop-once", "/drop-once"]


def test_threads_share_the_pool(server):
    with _client(server) as http:
        with ThreadPoolExecutor(8) as pool:
            paths = list(pool.map(lambda n: http.get(f"/t{n}").json()["path"], range(200)))
        idle = sum(len(held) for held in http._transport._idle.values())
    assert paths == [f"/t{n}" for n in range(200)]
    assert 1 <= idle <= min(8, MAX_IDLE_CONNECTIONS)
    # Far fewer connections than calls: kept alive and reused across threads.
    assert len({port for _, port in server.requests}) <= 16


def test_a_closed_transport_refuses_calls(server):
    http = _client(server)
    http.get("/x")
    http.close()
    with pytest.raises(RuntimeError):
        http.get("/y")


def test_the_client_uses_it_unless_the_environment_names_a_proxy(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with MemoryClient("http://svc.test", "k")._http as http:
        assert isinstance(http._transport, StdlibTransport)
    # httpx honours environment proxies only over its own transport.
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.test:3128")
    with MemoryClient("https://svc.test", "k")._http as http:
        assert isinstance(http._transport, httpx.HTTPTransport)
        assert any(pattern.matches(httpx.URL("https://svc.test/v1/x")) for pattern in http._mounts)


def test_tls_is_verified_against_the_given_certificates(tmp_path):
    import shutil
    import ssl
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                   check=True, capture_output=True)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads, srv.requests, srv.dropped = True, [], False
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    srv.socket = context.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"https://localhost:{srv.server_address[1]}/secure"
    try:
        trusted = ssl.create_default_context(cafile=str(cert))
        with httpx.Client(transport=StdlibTransport(ssl_context=trusted)) as http:
            assert [http.get(url).json()["path"] for _ in range(2)] == ["/secure"] * 2
        assert len({port for _, port in srv.requests}) == 1  # one TLS connection, kept alive
        with httpx.Client(transport=StdlibTransport(ssl_context=ssl.create_default_context())) as http, \
                pytest.raises(httpx.ConnectError):
            http.get(url)  # a certificate nobody vouches for
    finally:
        srv.shutdown()
        srv.server_close()


# --- Responses as a server may frame them, written byte by byte -------------------

_RAW_ANSWERS = {
    # HTTP/1.0 without a length: the body ends as the connection does.
    "/until-close": b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"to\": \"the end\"}",
    # An interim answer first, then the real one.
    "/continue": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
    "/no-content": b"HTTP/1.1 204 No Content\r\nX-Kind: none\r\n\r\n",
    # A value folded onto a second line (obsolete, still readable), and a repeated header.
    "/folded": b"HTTP/1.1 200 OK\r\nX-Long: one\r\n  two\r\nX-Twice: a\r\nX-Twice: b\r\nContent-Length: 2\r\n\r\n{}",
    "/chunk-extension": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;name=value\r\n{}\r\n0\r\nX-Trailer: t\r\n\r\n",
    "/cut-short": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"only\": \"part\"",
    "/not-http": b"SSH-2.0-OpenSSH_9.0\r\n",
    "/many-headers": b"HTTP/1.1 200 OK\r\n" + b"X-H: v\r\n" * 101 + b"Content-Length: 0\r\n\r\n",
    "/bad-length": b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",
    "/long-line": b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70_000 + b"\r\nContent-Length: 0\r\n\r\n",
    # More than the length says: the rest is not the next answer.
    "/overlong": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
}


def _serve_each_connection(listener: socket.socket, serve) -> None:
    """`serve(conn)` on a thread of its own for each connection accepted,
    until the listener is closed."""

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


@pytest.fixture
def raw_server():
    """Answers each request with `_RAW_ANSWERS[path]` as it is, then closes
    the connection when the answer says so (or its body runs to the close)."""
    listener = socket.create_server(("127.0.0.1", 0))
    requests: list[tuple[str, str, bytes, int]] = []

    def serve(conn: socket.socket) -> None:
        port = conn.getpeername()[1]
        with conn, conn.makefile("rb") as reader:
            while True:
                line = reader.readline()
                if not line:
                    return
                method, path, _ = line.decode().split(" ", 2)
                length = 0
                while (header := reader.readline()) not in (b"\r\n", b""):
                    name, _, value = header.decode().partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                requests.append((method, path, reader.read(length), port))
                answer = _RAW_ANSWERS[path]
                conn.sendall(answer if method != "HEAD" else answer.split(b"\r\n\r\n")[0] + b"\r\n\r\n")
                if path in ("/until-close", "/cut-short", "/not-http", "/many-headers", "/bad-length", "/long-line"):
                    return

    _serve_each_connection(listener, serve)
    yield SimpleNamespace(address=listener.getsockname(), requests=requests)
    listener.close()


def _raw_client(raw_server) -> httpx.Client:
    host, port = raw_server.address
    return httpx.Client(transport=StdlibTransport(), base_url=f"http://{host}:{port}/")


def test_each_framing_of_a_response_body_is_read(raw_server):
    with _raw_client(raw_server) as http:
        assert http.get("/until-close").json() == {"to": "the end"}
        assert http.get("/continue").json() == {}
        no_content = http.get("/no-content")
        assert no_content.status_code == 204 and no_content.content == b"" and no_content.headers["x-kind"] == "none"
        folded = http.get("/folded")
        assert folded.headers["x-long"] == "one two"
        assert folded.headers.get_list("x-twice") == ["a", "b"]
        assert http.get("/chunk-extension").json() == {}
        head = http.head("/folded")
        assert head.status_code == 200 and head.content == b""
        # After a HEAD (a length but no body) the connection is still in step.
        assert http.get("/no-content").status_code == 204


def test_a_request_is_sent_whole_with_its_body(raw_server):
    with _raw_client(raw_server) as http:
        http.post("/continue", json={"k": "v"})
        http.post("/continue", content=b"x" * 200_000)  # past one write's worth
    assert [(method, path, len(body)) for method, path, body, _ in raw_server.requests] == [
        ("POST", "/continue", len(b'{"k":"v"}')), ("POST", "/continue", 200_000)]


def test_a_connection_with_bytes_past_its_answer_is_not_reused(raw_server):
    with _raw_client(raw_server) as http:
        assert http.get("/overlong").json() == {}
        assert http.get("/continue").json() == {}
    (_, _, _, first), (_, _, _, second) = raw_server.requests
    assert first != second


@pytest.mark.parametrize("path", ["/cut-short", "/not-http", "/many-headers", "/bad-length", "/long-line"])
def test_a_malformed_or_cut_short_response_is_a_protocol_error(raw_server, path):
    with _raw_client(raw_server) as http:
        with pytest.raises(httpx.RemoteProtocolError):
            http.get(path)
        # The connection was dropped: the next call works on a new one.
        assert http.get("/continue").json() == {}


# --- The service client's direct calls (`StdlibTransport.send_direct`) ----------------


@pytest.fixture
def echo_server():
    """Answers every request with `{}`, keeping each request's line, header
    lines and body as they arrived."""
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[tuple[bytes, list[bytes], bytes]] = []

    def serve(conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as reader:
            while line := reader.readline():
                headers = []
                while (header := reader.readline()) not in (b"\r\n", b""):
                    headers.append(header.rstrip(b"\r\n"))
                length = next((int(h.split(b":")[1]) for h in headers if h.lower().startswith(b"content-length:")), 0)
                seen.append((line.rstrip(b"\r\n"), headers, reader.read(length)))
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")

    _serve_each_connection(listener, serve)
    yield SimpleNamespace(base=f"http://127.0.0.1:{listener.getsockname()[1]}/", seen=seen)
    listener.close()


_DIRECT_CALLS = [
    Call("POST", "langgraph_checkpoints/batch", json={"ops": [{"op": "put", "thread_id": "t-é", "n": 1.5}]}),
    Call("POST", "conversations/c1/messages", json={"content": "naïve 日本"}, headers={"Idempotency-Key": "k1"}),
    Call("POST", "openai_sessions/s1/items/pop"),  # no body: a zero length, as httpx sends
    Call("GET", "memories", params={"q": "tea & cake", "limit": 5, "active": True}),
    Call("DELETE", "openai_sessions/s1/items"),
    Call("PUT", "memory_stores/s/memories/m", json=[1, None], headers={"Content-Type": "application/json; v=2"}),
    Call("GET", "conversations", headers={"user-agent": "agent/2", "Accept": "application/json"}),
]


def test_a_direct_call_sends_what_httpx_would(echo_server):
    """The same call through httpx's pipeline and straight through the
    transport: the same request line, headers (name case included) and body."""
    options = {"base_url": echo_server.base, "headers": {"Authorization": "Bearer k", "User-Agent": "memory-client/0.1"}}
    with _ServiceClient(transport=StdlibTransport(), **options) as direct, \
            httpx.Client(transport=StdlibTransport(), **options) as pipeline:
        assert direct.direct_transport is not None and getattr(pipeline, "direct_transport", None) is None
        for call in _DIRECT_CALLS:
            assert run_sync(direct, call, RetryPolicy(max_retries=0)) == {}
            assert run_sync(pipeline, call, RetryPolicy(max_retries=0)) == {}
    sent_direct, sent_pipeline = echo_server.seen[0::2], echo_server.seen[1::2]
    assert len(sent_direct) == len(_DIRECT_CALLS)
    for (line, headers, body), (line_p, headers_p, body_p) in zip(sent_direct, sent_pipeline, strict=True):
        assert (line, sorted(headers), body) == (line_p, sorted(headers_p), body_p)
    assert b"Content-Length: 0" in sent_direct[2][1]
    assert sent_direct[1][2] == json.dumps({"content": "naïve 日本"}, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_client_with_hooks_or_auth_keeps_httpx_pipeline(echo_server):
    seen = []
    with _ServiceClient(transport=StdlibTransport(), base_url=echo_server.base,
                        event_hooks={"request": [lambda request: seen.append(request.url.path)]}) as hooked, \
            _ServiceClient(transport=StdlibTransport(), base_url=echo_server.base, auth=("user", "secret")) as authed, \
            _ServiceClient(base_url=echo_server.base) as httpx_transport:
        for client in (hooked, authed, httpx_transport):
            assert client.direct_transport is None
            assert run_sync(client, Call("GET", "x"), RetryPolicy(max_retries=0)) == {}
    assert seen == ["/x"]
    assert any(header.startswith(b"Authorization: Basic ") for header in echo_server.seen[1][1])


def test_a_direct_call_decodes_and_fails_as_httpx_does(server):
    host, port = server.server_address
    with _ServiceClient(transport=StdlibTransport(), base_url=f"http://{host}:{port}/",
                        timeout=httpx.Timeout(5.0, read=0.1)) as http:
        assert run_sync(http, Call("GET", "chunked"), RetryPolicy(max_retries=0)) == {"a": 1}
        assert run_sync(http, Call("GET", "gzip"), RetryPolicy(max_retries=0)) == {"zipped": True}
        with pytest.raises(MemoryConnectionError) as failed:
            run_sync(http, Call("GET", "slow"), RetryPolicy(max_retries=0))
        # The httpx error carries its request, built only now that it is needed.
        timeout = failed.value.__cause__
        assert isinstance(timeout, httpx.ReadTimeout)
        assert timeout.request.method == "GET" and timeout.request.url.path == "/slow"
        # A dropped connection is retried as before, on a new connection.
        assert run_sync(http, Call("GET", "drop-once"), RetryPolicy(max_retries=1, backoff=0))["path"] == "/drop-once"


def test_a_direct_call_logs_and_refuses_as_httpx_does(echo_server, caplog):
    options = {"base_url": echo_server.base, "headers": {"Authorization": "Bearer k"}}
    with _ServiceClient(transport=StdlibTransport(), **options) as direct, \
            httpx.Client(transport=StdlibTransport(), **options) as pipeline:
        with caplog.at_level(logging.INFO, logger="httpx"):
            for client in (direct, pipeline):
                run_sync(client, Call("GET", "logged"), RetryPolicy(max_retries=0))
        assert [r.getMessage() for r in caplog.records] == [f'HTTP Request: GET {echo_server.base}logged "HTTP/1.1 200 OK"'] * 2
        for client in (direct, pipeline):
            # A lower-case method goes as httpx sends it (upper case, a bodiless POST with its zero length).
            run_sync(client, Call("post", "lower"), RetryPolicy(max_retries=0))
            with pytest.raises(TypeError, match="Header value must be str or bytes"):
                run_sync(client, Call("POST", "x", headers={"Idempotency-Key": 7}), RetryPolicy(max_retries=0))
    (line, headers, _), (line_p, headers_p, _) = echo_server.seen[2:4]
    assert (line, sorted(headers)) == (line_p, sorted(headers_p)) and b"Content-Length: 0" in headers


def test_credentials_in_the_base_url_keep_httpx_pipeline(echo_server):
    base = echo_server.base.replace("http://", "http://user:pw@")
    with _ServiceClient(transport=StdlibTransport(), base_url=base, headers={"Authorization": "Bearer k"}) as http:
        assert http.direct_transport is None
        run_sync(http, Call("GET", "x"), RetryPolicy(max_retries=0))
    assert b"Authorization: Basic dXNlcjpwdw==" in echo_server.seen[0][1]


def test_every_error_of_a_direct_call_carries_its_request(raw_server):
    _RAW_ANSWERS["/bad-gzip"] = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nnope"
    host, port = raw_server.address
    try:
        with _ServiceClient(transport=StdlibTransport(), base_url=f"http://{host}:{port}/") as http:
            with pytest.raises(httpx.DecodingError) as corrupt:
                http.direct_transport.send_direct(http, "GET", httpx.URL(f"http://{host}:{port}/bad-gzip"), None, {})
            assert corrupt.value.request.url.path == "/bad-gzip"
        with _ServiceClient(transport=StdlibTransport(), base_url="ftp://example.invalid/") as http, \
                pytest.raises(httpx.UnsupportedProtocol) as refused:
            http.direct_transport.send_direct(http, "GET", httpx.URL("ftp://example.invalid/x"), None, {})
        assert refused.value.request.url.scheme == "ftp"
    finally:
        del _RAW_ANSWERS["/bad-gzip"]
