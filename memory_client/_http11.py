"""The sync client's HTTP/1.1 transport: the standard library's `http.client`
under httpx's interface, with a keep-alive pool.

httpx's own transport (httpcore over h11) parses every response in pure
Python and spent ~0.5 ms of CPU per call here, more than the service spends
answering a small request; `http.client` does the same exchange for ~0.15 ms.
Everything above the transport (URLs, headers, content decoding, errors, the
retry policy) is still httpx's and the client's own. It makes direct
connections only: a client whose environment names a proxy keeps httpx's own
transport (`ClientConfig.sync_http`).

Like httpx's transport, a call is not retried here: a connection the server
closed while idle is found before it is reused and dropped, and any other
failure is raised as the httpx error httpx's transport would raise, for the
client's retry policy to judge.
"""

from __future__ import annotations

import http.client
import select
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

# As httpx's defaults: idle connections kept per pool, and for how long.
MAX_IDLE_CONNECTIONS = 20
KEEPALIVE_EXPIRY_SECONDS = 5.0

_Origin = tuple[str, str, int]


class _Idle:
    __slots__ = ("conn", "since")

    def __init__(self, conn: http.client.HTTPConnection):
        self.conn = conn
        self.since = time.monotonic()


class StdlibTransport(httpx.BaseTransport):
    """An httpx transport over `http.client` connections, kept alive and
    reused (most recently used first); safe to share between threads, each
    connection serving one request at a time."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None):
        self._ssl_context = ssl_context
        self._idle: dict[_Origin, list[_Idle]] = {}
        self._lock = threading.Lock()
        self._closed = False

    # --- The exchange ----------------------------------------------------------

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"Request URL has an unsupported protocol '{url.scheme}://'.")
        origin = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        timeouts = request.extensions.get("timeout", {})
        body = request.read()
        headers = _sent_headers(request, body)
        conn = self._checkout(origin, timeouts)
        try:
            if conn.sock is None:
                with _mapped_errors(request, "connect"):
                    conn.connect()
            with _mapped_errors(request, "write"):
                conn.sock.settimeout(timeouts.get("write"))
                conn.putrequest(request.method, url.raw_path.decode("ascii"), skip_host=True, skip_accept_encoding=True)
                for name, value in headers:
                    conn.putheader(name, value)
                conn.endheaders(body or None)
            with _mapped_errors(request, "read"):
                conn.sock.settimeout(timeouts.get("read"))
                response = conn.getresponse()
                # Transfer encodings are undone here, content encodings by httpx.
                content = response.read()
        except BaseException:
            conn.close()
            raise
        if response.will_close:
            conn.close()
        else:
            self._checkin(origin, conn)
        return httpx.Response(
            response.status,
            headers=[(name.encode("latin-1"), value.encode("latin-1")) for name, value in response.getheaders()],
            stream=httpx.ByteStream(content),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": response.reason.encode("latin-1")},
        )

    # --- The pool -----------------------------------------------------------------

    def _checkout(self, origin: _Origin, timeouts: dict[str, Any]) -> http.client.HTTPConnection:
        """An idle connection to the origin still open, or a new one (not yet connected)."""
        now = time.monotonic()
        while True:
            with self._lock:
                if self._closed:
                    raise RuntimeError("Cannot send a request, as the client has been closed.")
                idle = self._idle.get(origin)
                held = idle.pop() if idle else None
            if held is None:
                break
            if now - held.since < KEEPALIVE_EXPIRY_SECONDS and not _closed_by_peer(held.conn):
                return held.conn
            held.conn.close()
        scheme, host, port = origin
        if scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=timeouts.get("connect"), context=self._ssl_context)
        return http.client.HTTPConnection(host, port, timeout=timeouts.get("connect"))

    def _checkin(self, origin: _Origin, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if not self._closed:
                idle = self._idle.setdefault(origin, [])
                if sum(len(held) for held in self._idle.values()) < MAX_IDLE_CONNECTIONS:
                    idle.append(_Idle(conn))
                    return
        conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, {}
        for held in (held for pool in idle.values() for held in pool):
            held.conn.close()


def _sent_headers(request: httpx.Request, body: bytes) -> list[tuple[bytes, bytes]]:
    """The request's headers as sent: the body is read whole before sending,
    so a streamed one (`Transfer-Encoding: chunked`) goes with its length."""
    headers = request.headers.raw
    if not any(name.lower() == b"transfer-encoding" for name, _ in headers):
        return headers
    kept = [(name, value) for name, value in headers if name.lower() not in (b"transfer-encoding", b"content-length")]
    return [*kept, (b"Content-Length", str(len(body)).encode("ascii"))]


def _closed_by_peer(conn: http.client.HTTPConnection) -> bool:
    """An idle connection with something to read has been closed by the
    server (or sent what no request asked for): either way, not reusable."""
    sock = conn.sock
    if sock is None:
        return True
    try:
        if _poll is not None:  # any descriptor number (select() stops at 1024)
            poller = _poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


_poll = getattr(select, "poll", None)  # not on Windows

_TIMEOUTS = {"connect": httpx.ConnectTimeout, "write": httpx.WriteTimeout, "read": httpx.ReadTimeout}


@contextmanager
def _mapped_errors(request: httpx.Request, phase: str) -> Iterator[None]:
    """The standard library's failures in one phase of the exchange
    (`connect`, `write`, `read`) as the httpx errors its own transport raises
    for them (the retry policy tells them apart)."""
    try:
        yield
    except TimeoutError as exc:  # socket.timeout
        raise _TIMEOUTS[phase](str(exc) or "timed out", request=request) from exc
    except OSError as exc:  # refused, unresolvable, TLS handshake, reset ...
        if phase == "connect":
            raise httpx.ConnectError(str(exc), request=request) from exc
        if isinstance(exc, http.client.RemoteDisconnected | ConnectionResetError | BrokenPipeError):
            raise httpx.RemoteProtocolError(
                str(exc) or "Server disconnected without sending a response.", request=request
            ) from exc
        raise (httpx.WriteError if phase == "write" else httpx.ReadError)(str(exc), request=request) from exc
    except http.client.HTTPException as exc:  # a malformed or cut-short response
        raise httpx.RemoteProtocolError(f"{exc.__class__.__name__}: {exc}", request=request) from exc
    except ValueError as exc:
        if phase == "read":  # an answer http.client cannot parse
            raise httpx.RemoteProtocolError(str(exc), request=request) from exc
        # A header name or value http.client refuses to send.
        raise httpx.LocalProtocolError(str(exc), request=request) from exc
