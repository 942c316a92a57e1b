"""Request guards that must act before (or outside) DRF.

- A body announced larger than `DATA_UPLOAD_MAX_MEMORY_SIZE` is answered 413
  in the API's error shape before anything reads it (DRF reads the stream
  itself and would never raise Django's `RequestDataTooBig`).
- A path or query string carrying NUL or undecodable bytes is answered 400:
  such a value cannot be stored or even compared in PostgreSQL, and would
  otherwise surface as a 500 from the database driver.
- A body sent in chunks (no Content-Length) is read to its end, within the
  same limit, where the web server ends the stream (gunicorn): Django alone
  would read it as empty.
- On the paths DRF does not handle (admin, health check), a dropped database
  connection is answered 503 with `Retry-After`, like the API's own handler.
- A request line longer than `MAX_REQUEST_LINE_BYTES` is answered 414 in the
  error shape. The web server's own limit is raised above it
  (`memory_project/gunicorn.conf.py`), because the server would answer an HTML
  page that no API client can parse.

And Django's middleware that only the admin console needs, which API requests
skip (`SessionMiddleware`, `AuthenticationMiddleware`, `MessageMiddleware`).
"""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.conf import settings
from django.contrib.auth import middleware as django_auth
from django.contrib.messages import middleware as django_messages
from django.contrib.sessions import middleware as django_sessions
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.wsgi import LimitedStream
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.exceptions import AuthenticationFailed

from accounts.authentication import request_raw_key
from accounts.selectors import api_key_authenticate
from memory_project.api import error_body

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = "1"
# The longest request line (method, path, query, protocol) most proxies and
# gunicorn's own ceiling accept; ids and filters fit many times over.
MAX_REQUEST_LINE_BYTES = 8190
# A chunked body is read in pieces of this size until its end or the limit.
CHUNKED_READ_BYTES = 64 * 1024


def database_unavailable_response() -> JsonResponse:
    response = JsonResponse(
        error_body("overloaded_error", "The database is temporarily unavailable; retry the request."), status=503
    )
    response["Retry-After"] = RETRY_AFTER_SECONDS
    return response


def invalid_request_response(message: str, status: int = 400) -> JsonResponse:
    """An `invalid_request_error` answered before (or outside) DRF."""
    return JsonResponse(error_body("invalid_request_error", message), status=status)


def too_large_response(limit: int) -> JsonResponse:
    return invalid_request_response(f"Request body is larger than {limit} bytes.", status=413)


def request_line_length(request: HttpRequest) -> int:
    """Bytes of the request line as the client sent it (`GET /v1/... HTTP/1.1`)."""
    meta = request.META
    target = meta.get("RAW_URI") or meta.get("REQUEST_URI")
    if target is None:
        target = request.get_full_path()
    protocol = meta.get("SERVER_PROTOCOL") or "HTTP/1.1"
    return len(request.method or "") + len(target.encode("latin-1", "replace")) + len(protocol) + 2


def _query_is_unstorable(query: str) -> bool:
    """NUL or invalid UTF-8 in the raw query string (Django would silently turn
    the latter into U+FFFD, and the former reaches the database driver)."""
    raw = unquote_to_bytes(query.replace("+", " "))
    if b"\x00" in raw:
        return True
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def raw_request_path(request: HttpRequest) -> str:
    """The path as the client sent it, still percent-encoded, when the server
    reports it (gunicorn's RAW_URI, uWSGI's REQUEST_URI, an ASGI `raw_path`);
    "" otherwise."""
    meta = request.META
    raw = meta.get("RAW_URI") or meta.get("REQUEST_URI")
    if raw is None:
        scope = getattr(request, "scope", None)
        raw_bytes = scope.get("raw_path") if isinstance(scope, dict) else None
        raw = raw_bytes.decode("latin-1") if isinstance(raw_bytes, bytes) else ""
    return raw.split("?", 1)[0]


def _path_is_undecodable(request: HttpRequest) -> bool:
    """Invalid UTF-8 in the path as the client sent it. Django re-percent-encodes
    broken bytes, so a raw `%FF` would reach the views as the three characters
    `%FF`: the same path as an id literally spelt `%FF` (sent as `%25FF`). Only
    the raw path tells them apart."""
    try:
        unquote_to_bytes(raw_request_path(request)).decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _read_chunked_body(request: HttpRequest) -> HttpResponse | None:
    """Read a body sent in chunks (`Transfer-Encoding: chunked`, no
    Content-Length) here, within the size limit: a 413 when it is over, a 400
    when it is malformed or ends early.

    Django's WSGI request reads a body only as far as its Content-Length, so
    it would see an empty one, and the view would answer for that (a 400 that
    names fields the client did send). A server that ends such a stream itself
    (`wsgi.input_terminated`, as gunicorn does) lets it be read to its end; on
    any other server the body stays unread, as before. It is read only for a
    request that presents a valid API key: a body sent with a Content-Length
    is read by the view, after authentication, and an anonymous client must
    not be able to make a worker thread wait on, or hold, what it sends."""
    meta = request.META
    if (meta.get("CONTENT_LENGTH") or "chunked" not in meta.get("HTTP_TRANSFER_ENCODING", "").lower()
            or not meta.get("wsgi.input_terminated") or not _presents_a_valid_key(request)):
        return None
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    stream, body = meta["wsgi.input"], io.BytesIO()
    try:
        while limit is None or body.tell() <= limit:
            chunk = stream.read(CHUNKED_READ_BYTES)
            if not chunk:
                break
            body.write(chunk)
    except Exception:  # noqa: BLE001 - the web server's own parse errors (a bad chunk size, a client gone)
        return invalid_request_response("The chunked body is malformed or ended before its last chunk.")
    size = body.tell()
    if limit is not None and size > limit:
        return too_large_response(limit)
    body.seek(0)
    meta["CONTENT_LENGTH"] = str(size)
    request._stream = LimitedStream(body, size)  # what WSGIRequest reads the body from
    return None


def _presents_a_valid_key(request: HttpRequest) -> bool:
    try:
        raw_key = request_raw_key(request)
    except AuthenticationFailed:
        return False
    return raw_key is not None and api_key_authenticate(raw_key=raw_key) is not None


class RequestGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refused = self._refuse(request) or _read_chunked_body(request)
        if refused is not None:
            return refused
        return self.get_response(request)

    def _refuse(self, request: HttpRequest) -> HttpResponse | None:
        if request_line_length(request) > MAX_REQUEST_LINE_BYTES:
            return invalid_request_response(
                f"The request line is longer than {MAX_REQUEST_LINE_BYTES} bytes; send long values in a body.",
                status=414,
            )
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw_length = request.META.get("CONTENT_LENGTH") or "0"
        try:
            length = int(raw_length)
        except ValueError:
            return invalid_request_response("Content-Length is not a number.")
        if length < 0:
            return invalid_request_response("Content-Length is negative.")
        if limit is not None and length > limit:
            return too_large_response(limit)
        if "\x00" in request.path or _path_is_undecodable(request):
            return invalid_request_response("The path contains NUL or invalid UTF-8.")
        query = request.META.get("QUERY_STRING", "")
        if query and _query_is_unstorable(query):
            return invalid_request_response("The query string contains NUL or invalid UTF-8.")
        return None

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, RequestDataTooBig):
            return too_large_response(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        if isinstance(exception, (OperationalError, InterfaceError)):
            logger.warning("database unavailable during request: %s", exception.__class__.__name__)
            return database_unavailable_response()
        return None


def server_error(request: HttpRequest) -> HttpResponse:
    """`handler500`: an exception that escaped every view and middleware.

    Runs inside Django's exception handling, so the exception is still current:
    a lost database connection becomes a retryable 503, anything else a 500 in
    the error shape (never a traceback or HTML page).
    """
    exc = sys.exc_info()[1]
    if isinstance(exc, (OperationalError, InterfaceError)):
        return database_unavailable_response()
    return JsonResponse(error_body("api_error", "Internal server error."), status=500)


# --- Middleware only the console's pages need ---------------------------------
#
# Django's session, login and message middleware serve the admin console: a
# browser with a session cookie. An API request (authenticated by its key,
# answered in JSON) uses none of them, yet each ran on every call: with the
# CSRF middleware, a twentieth of a small request's server time
# (bench/README.md). Their subclasses here let API requests pass straight
# through; every other request gets Django's own. The CSRF middleware stays
# Django's own, as deployment checks look for it by name: for an API request
# (DRF's views are all CSRF-exempt) it reads no token and sets no cookie.

# The API's own paths; its schema pages (HTML for a browser) are not among them.
_API_PREFIXES = ("/v1/", "/mcp")
_API_BROWSER_PAGES = ("/v1/docs/", "/v1/redoc/")


def is_api_request(request: HttpRequest) -> bool:
    path = request.path_info
    return path.startswith(_API_PREFIXES) and not path.startswith(_API_BROWSER_PAGES)


class _ConsoleOnly:
    """Mixin, before a Django middleware class: API requests skip it."""

    get_response: Callable[[HttpRequest], HttpResponse]

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_api_request(request):
            # Under ASGI this returns the handler's coroutine, which Django awaits.
            return self.get_response(request)
        return super().__call__(request)  # type: ignore[misc]


class SessionMiddleware(_ConsoleOnly, django_sessions.SessionMiddleware):
    pass


class AuthenticationMiddleware(_ConsoleOnly, django_auth.AuthenticationMiddleware):
    pass


class MessageMiddleware(_ConsoleOnly, django_messages.MessageMiddleware):
    pass
