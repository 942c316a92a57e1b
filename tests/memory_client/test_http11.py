"""The sync client's transport (`memory_client._http11`) against a real HTTP/1.1
server on a local socket: keep-alive, connections the server dropped,
transfer and content encodings, errors as httpx's own transport raises them."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from memory_client import MemoryClient
from memory_client._http11 import MAX_IDLE_CONNECTIONS, StdlibTransport
from memory_client._transport import Call, RetryPolicy, run_sync
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
