"""The sync client's HTTP/1.1 transport: a keep-alive pool of plain sockets
under httpx's interface, the exchange written and read here.

httpx's own transport (httpcore over h11) parses every response in pure
Python and spent ~0.5 ms of CPU per call here, more than the service spends
answering a small request; `http.client` did the same exchange for ~0.3 ms,
most of it parsing the response's headers with the `email` package. Here a
request is one `sendall` and a response a status line, header lines and a
body read from the socket's buffered bytes: ~0.1 ms. It makes direct
connections only: a client whose environment names a proxy keeps httpx's own
transport (`ClientConfig.sync_http`).

The service client's calls also skip httpx's request pipeline
(`send_direct`): httpx builds a `Request`, merges and normalizes its headers
and runs its auth, redirect and hook stages around every call, ~0.1 ms of
the ~0.33 ms a LangGraph checkpoint save cost the client here. The headers
are merged and the JSON encoded as httpx does it, so the bytes sent are the
same; content decoding, errors and the retry policy stay httpx's and the
client's own. A client with auth, event hooks or mounts keeps the pipeline.

Like httpx's transport, a call is not retried here: a connection the server
closed while idle is found before it is reused and dropped, and any other
failure is raised as the httpx error httpx's transport would raise, for the
client's retry policy to judge.
"""

from __future__ import annotations

import http.client
import json
import logging
import re
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import httpx

# As httpx's defaults: idle connections kept per pool, and for how long.
MAX_IDLE_CONNECTIONS = 20
KEEPALIVE_EXPIRY_SECONDS = 5.0
# As http.client's limits: the longest status or header line, the most headers.
MAX_LINE = 65536
MAX_HEADERS = 100

_Origin = tuple[str, str, int]
# The httpx request an error carries, built by the caller when one is raised.
_RequestOf = Callable[[], httpx.Request]
# What RFC 9110 allows in a field name (a token), and what no field value may
# hold: a request must not carry a second header or request inside a value.
_FIELD_NAME = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_UNSAFE_VALUE = re.compile(rb"[\r\n\x00]")


class _Reader:
    """A connection's incoming bytes, buffered. Bytes left over after a
    response (a server that sent more than it framed) stay in `buffer`, so
    the connection is known not to be in step and is not reused."""

    __slots__ = ("sock", "buffer")

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buffer = bytearray()

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buffer += chunk
        return bool(chunk)

    def _take(self, size: int) -> bytes:
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def readline(self, limit: int) -> bytes:
        """A line with its end (at most `limit` bytes: a longer one is cut
        there), or what came before the connection closed."""
        scanned = 0
        while True:
            end = self.buffer.find(b"\n", scanned, limit)
            if end >= 0:
                return self._take(end + 1)
            if len(self.buffer) >= limit:
                return self._take(limit)
            scanned = len(self.buffer)
            if not self._fill():
                return self._take(len(self.buffer))

    def read(self, size: int) -> bytes:
        """`size` bytes, or fewer if the connection closed first."""
        while len(self.buffer) < size and self._fill():
            pass
        return self._take(size)

    def read_to_close(self) -> bytes:
        while self._fill():
            pass
        return self._take(len(self.buffer))


class _Connection:
    """One socket and what its responses are read through."""

    __slots__ = ("sock", "reader", "since")

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.reader = _Reader(sock)
        self.since = 0.0

    def close(self) -> None:
        self.sock.close()


class _Response:
    __slots__ = ("status", "reason", "headers", "content", "will_close")

    def __init__(self, status: int, reason: bytes, headers: list[tuple[bytes, bytes]], content: bytes, will_close: bool):
        self.status, self.reason, self.headers, self.content, self.will_close = status, reason, headers, content, will_close


class StdlibTransport(httpx.BaseTransport):
    """An httpx transport over kept-alive socket connections, reused (most
    recently used first); safe to share between threads, each connection
    serving one request at a time."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None):
        self._ssl_context = ssl_context
        self._idle: dict[_Origin, list[_Connection]] = {}
        self._lock = threading.Lock()
        self._closed = False

    # --- The exchange ----------------------------------------------------------

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        body = request.read()
        with _mapped_errors(lambda: request, "write"):
            head = _request_head(request.method, url.raw_path, _sent_headers(request, body))
        return self._exchange(request.method, url, head + body, request.extensions.get("timeout", {}), lambda: request)

    def send_direct(
        self, client: httpx.Client, method: str, url: httpx.URL, json_body: Any, headers: Mapping[str, str]
    ) -> httpx.Response:
        """`client.request(method, url, json=json_body, headers=headers)`,
        read, for a client whose transport this is and that has no auth,
        event hooks or mounts: the request's headers merged as httpx merges
        them, its JSON encoded as httpx encodes it, its line logged as httpx
        logs it, and no `Request` built unless a failure needs one for its
        exception (every httpx error carries its request)."""
        method = method.upper()
        body = b"" if json_body is None else _json_bytes(json_body)
        sent = _merged_headers(client.headers, headers, url, method, json_body is not None, len(body))

        def request() -> httpx.Request:
            return client.build_request(method, url, json=json_body, headers=headers)

        with _mapped_errors(request, "write"):
            head = _request_head(method, url.raw_path, sent)
        response = self._exchange(method, url, head + body, client.timeout.as_dict(), request)
        try:
            response.read()  # content decoding: a corrupt body raises httpx.DecodingError
        except httpx.RequestError as exc:
            exc.request = request()
            raise
        _httpx_log.info('HTTP Request: %s %s "%s %d %s"', method, url, response.http_version,
                        response.status_code, response.reason_phrase)
        return response

    def _exchange(
        self, method: str, url: httpx.URL, data: bytes, timeouts: dict[str, Any], request: _RequestOf
    ) -> httpx.Response:
        """Send a request's bytes (`data`: head and body) on a pooled
        connection and read its response. `request` gives the httpx request
        an error carries: a direct call builds one only when it fails."""
        if url.scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"Request URL has an unsupported protocol '{url.scheme}://'.",
                                            request=request())
        origin = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        conn = self._checkout(origin, timeouts, request)
        try:
            with _mapped_errors(request, "write"):
                conn.sock.settimeout(timeouts.get("write"))
                # One write: no segment of the request waits on the first's acknowledgement.
                conn.sock.sendall(data)
            with _mapped_errors(request, "read"):
                conn.sock.settimeout(timeouts.get("read"))
                response = _read_response(conn.reader, method)
        except BaseException:
            conn.close()
            raise
        if response.will_close or conn.reader.buffer:
            conn.close()
        else:
            self._checkin(origin, conn)
        # Transfer encodings are undone here, content encodings by httpx.
        return httpx.Response(
            response.status,
            headers=response.headers,
            stream=httpx.ByteStream(response.content),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": response.reason},
        )

    # --- The pool -----------------------------------------------------------------

    def _checkout(self, origin: _Origin, timeouts: dict[str, Any], request: _RequestOf) -> _Connection:
        """An idle connection to the origin still open, or a new one."""
        now = time.monotonic()
        while True:
            with self._lock:
                if self._closed:
                    raise RuntimeError("Cannot send a request, as the client has been closed.")
                idle = self._idle.get(origin)
                held = idle.pop() if idle else None
            if held is None:
                break
            if now - held.since < KEEPALIVE_EXPIRY_SECONDS and not _closed_by_peer(held.sock):
                return held
            held.close()
        with _mapped_errors(request, "connect"):
            return self._connect(origin, timeouts.get("connect"))

    def _connect(self, origin: _Origin, timeout: float | None) -> _Connection:
        scheme, host, port = origin
        sock = socket.create_connection((host, port), timeout)
        try:
            # As http.client does: Nagle off, a request leaves as it is written.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if scheme == "https":
                if self._ssl_context is None:
                    # Made once (it loads the system's certificates), not per connection.
                    self._ssl_context = ssl.create_default_context()
                sock = self._ssl_context.wrap_socket(sock, server_hostname=host)
        except BaseException:
            sock.close()
            raise
        return _Connection(sock)

    def _checkin(self, origin: _Origin, conn: _Connection) -> None:
        conn.since = time.monotonic()
        with self._lock:
            if not self._closed:
                idle = self._idle.setdefault(origin, [])
                if sum(len(held) for held in self._idle.values()) < MAX_IDLE_CONNECTIONS:
                    idle.append(conn)
                    return
        conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, {}
        for held in (held for pool in idle.values() for held in pool):
            held.close()


def _request_head(method: str, target: bytes, headers: list[tuple[bytes, bytes]]) -> bytes:
    """The request line and header block. A header that would end early or
    smuggle another is refused (`ValueError`), as http.client refuses it."""
    lines = [b"%s %s HTTP/1.1" % (method.encode("ascii"), target)]
    for name, value in headers:
        if not _FIELD_NAME.match(name):
            raise ValueError(f"Invalid header name {name!r}")
        if _UNSAFE_VALUE.search(value):
            raise ValueError(f"Invalid header value {value!r}")
        lines.append(b"%s: %s" % (name, value))
    lines.append(b"\r\n")
    return b"\r\n".join(lines)


def _read_line(reader: _Reader) -> bytes:
    line = reader.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise http.client.LineTooLong("header line")
    return line


def _read_response(reader: _Reader, method: str) -> _Response:
    """A response, read whole: status line, headers, and the body its framing
    gives (chunked, a length, or up to the close), as RFC 9112 reads it."""
    while True:
        line = _read_line(reader)
        if not line:
            raise http.client.RemoteDisconnected("Remote end closed connection without response")
        parts = line.rstrip(b"\r\n").split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
            raise http.client.BadStatusLine(repr(line))
        version, status, reason = parts[0], int(parts[1]), parts[2] if len(parts) > 2 else b""
        headers = _read_headers(reader)
        if not 100 <= status < 200 or status == 101:
            break  # an interim answer (100 Continue) is followed by the real one
    fields: dict[bytes, bytes] = {}
    for name, value in headers:
        key = name.lower()
        fields[key] = fields[key] + b", " + value if key in fields else value
    connection = fields.get(b"connection", b"").lower()
    will_close = b"close" in connection or (version == b"HTTP/1.0" and b"keep-alive" not in connection)
    if method == "HEAD" or status in (101, 204, 304):  # the statuses that never carry a body
        return _Response(status, reason, headers, b"", will_close)
    if b"chunked" in fields.get(b"transfer-encoding", b"").lower():
        return _Response(status, reason, headers, _read_chunked(reader), will_close)
    length = fields.get(b"content-length")
    if length is None:
        return _Response(status, reason, headers, reader.read_to_close(), True)  # the body ends as the connection does
    try:
        size = int(length.split(b",")[0])
    except ValueError:
        raise http.client.HTTPException(f"invalid Content-Length {length!r}") from None
    content = reader.read(size)
    if len(content) < size:
        raise http.client.IncompleteRead(content, size - len(content))
    return _Response(status, reason, headers, content, will_close)


def _read_headers(reader: _Reader) -> list[tuple[bytes, bytes]]:
    headers: list[tuple[bytes, bytes]] = []
    while True:
        line = _read_line(reader)
        if line in (b"\r\n", b"\n"):
            return headers
        if not line:
            raise http.client.RemoteDisconnected("Remote end closed connection in the headers")
        if len(headers) >= MAX_HEADERS:
            raise http.client.HTTPException(f"got more than {MAX_HEADERS} headers")
        if line[:1] in (b" ", b"\t") and headers:  # a folded line continues the last value
            name, value = headers[-1]
            headers[-1] = (name, value + b" " + line.strip())
            continue
        name, sep, value = line.partition(b":")
        if not sep:
            raise http.client.HTTPException(f"malformed header line {line!r}")
        headers.append((name.strip(), value.strip()))


def _read_chunked(reader: _Reader) -> bytes:
    parts = []
    while True:
        line = _read_line(reader)
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise http.client.HTTPException(f"invalid chunk size {line!r}") from None
        if size == 0:
            while _read_line(reader) not in (b"\r\n", b"\n", b""):
                pass  # trailers: nothing here reads them
            return b"".join(parts)
        chunk = reader.read(size)
        if len(chunk) < size:
            raise http.client.IncompleteRead(b"".join(parts) + chunk, size - len(chunk))
        parts.append(chunk)
        reader.read(2)  # the CRLF after the chunk


def _sent_headers(request: httpx.Request, body: bytes) -> list[tuple[bytes, bytes]]:
    """The request's headers as sent: the body is read whole before sending,
    so a streamed one (`Transfer-Encoding: chunked`) goes with its length."""
    headers = request.headers.raw
    if not any(name.lower() == b"transfer-encoding" for name, _ in headers):
        return headers
    kept = [(name, value) for name, value in headers if name.lower() not in (b"transfer-encoding", b"content-length")]
    return [*kept, (b"Content-Length", str(len(body)).encode("ascii"))]


def _json_bytes(value: Any) -> bytes:
    # As httpx encodes a request's `json`.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _merged_headers(
    defaults: httpx.Headers, extra: Mapping[str, str], url: httpx.URL, method: str, has_json: bool, length: int
) -> list[tuple[bytes, bytes]]:
    """The headers httpx sends for `client.request(..., json=..., headers=extra)`:
    the client's, each replaced by a header of `extra` with its name; the
    JSON body's length and type unless given; and before them the Host and,
    for a bodiless POST, PUT or PATCH, a zero length."""
    given = [(_ascii_bytes(name), _header_value(value)) for name, value in extra.items()]
    replaced = {name.lower() for name, _ in given}
    merged = [(name, value) for name, value in defaults.raw if name.lower() not in replaced] + given
    present = {name.lower() for name, _ in merged}
    if has_json:
        if b"content-length" not in present:
            merged.append((b"Content-Length", str(length).encode("ascii")))
        if b"content-type" not in present:
            merged.append((b"Content-Type", b"application/json"))
        present |= {b"content-length", b"content-type"}
    automatic = []
    if b"host" not in present and url.host:
        automatic.append((b"Host", url.netloc))
    if not present & {b"content-length", b"transfer-encoding"} and method in ("POST", "PUT", "PATCH"):
        automatic.append((b"Content-Length", b"0"))
    return automatic + merged


# As httpx takes a header's name and value: bytes as they are, text as ASCII
# (anything else raises UnicodeEncodeError), a value of another type refused.


def _ascii_bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("ascii")


def _header_value(value: str | bytes) -> bytes:
    if not isinstance(value, str | bytes):
        raise TypeError(f"Header value must be str or bytes, not {type(value)}")
    return _ascii_bytes(value)


def _closed_by_peer(sock: socket.socket) -> bool:
    """An idle connection with something to read has been closed by the
    server (or sent what no request asked for): either way, not reusable."""
    try:
        if _poll is not None:  # any descriptor number (select() stops at 1024)
            poller = _poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


# httpx's own logger: a direct call logs its line as httpx's pipeline does.
_httpx_log = logging.getLogger("httpx")

_poll = getattr(select, "poll", None)  # not on Windows

_TIMEOUTS = {"connect": httpx.ConnectTimeout, "write": httpx.WriteTimeout, "read": httpx.ReadTimeout}


@contextmanager
def _mapped_errors(request: _RequestOf, phase: str) -> Iterator[None]:
    """The standard library's failures in one phase of the exchange
    (`connect`, `write`, `read`) as the httpx errors its own transport raises
    for them (the retry policy tells them apart), each with its request."""
    try:
        yield
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise _httpx_error(exc, request(), phase) from exc


def _httpx_error(exc: Exception, request: httpx.Request, phase: str) -> httpx.TransportError:
    if isinstance(exc, TimeoutError):  # socket.timeout
        return _TIMEOUTS[phase](str(exc) or "timed out", request=request)
    if isinstance(exc, OSError):  # refused, unresolvable, TLS handshake, reset ...
        if phase == "connect":
            return httpx.ConnectError(str(exc), request=request)
        if isinstance(exc, http.client.RemoteDisconnected | ConnectionResetError | BrokenPipeError):
            return httpx.RemoteProtocolError(str(exc) or "Server disconnected without sending a response.", request=request)
        return (httpx.WriteError if phase == "write" else httpx.ReadError)(str(exc), request=request)
    if isinstance(exc, http.client.HTTPException):  # a malformed or cut-short response
        return httpx.RemoteProtocolError(f"{exc.__class__.__name__}: {exc}", request=request)
    if phase == "read":  # an answer http.client cannot parse
        return httpx.RemoteProtocolError(str(exc), request=request)
    # A header name or value http.client refuses to send.
    return httpx.LocalProtocolError(str(exc), request=request)
