"""`/mcp`: the MCP server over Streamable HTTP, inside the Django deployment.

Why a view and not a second (ASGI) server: the SDK's session manager runs in
stateless JSON mode here, so every POST is one complete JSON-RPC exchange
(request in, JSON response out) with no stream left open. That is exactly
what a WSGI worker serves well, so `/mcp` runs wherever the API runs
(`make run`, gunicorn in production, the test server), behind the same API
key authentication, throttling and error shapes, with no process to add.
Stateless mode is also what a multi-worker deployment needs: any worker can
answer any request, as nothing is kept in one worker's memory.

What stateless mode loses is the client's `initialize` (its `clientInfo`),
which every write records as its actor. So the answer to `initialize` carries
an `Mcp-Session-Id` that is a signed token of (API key, client name); the
client sends it back on every request, and a token made for another key, or
forged, is answered 404 as the spec says for an unknown session (the client
then initializes again). `GET` (a server-to-client stream) is 405: this
server sends nothing unprompted. `DELETE` ends nothing and answers 204.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import anyio
from asgiref.sync import async_to_sync
from django.core import signing
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse, JsonResponse
from drf_spectacular.utils import extend_schema
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from rest_framework.exceptions import ParseError
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.request import Request
from rest_framework.views import APIView

from agent_tools.mcp.server import CALLER_SCOPE_KEY, Caller, build_server
from memory_project.parsers import decode_json_bytes

SESSION_HEADER = "mcp-session-id"
SESSION_SALT = "agent_tools.mcp.session"
# The session manager and transport are built per request (stateless mode keeps nothing
# between requests); their start/stop lines would log on every request.
for _name in ("mcp.server.streamable_http_manager", "mcp.server.streamable_http"):
    logging.getLogger(_name).setLevel(logging.WARNING)


@functools.cache
def mcp_server() -> Server:
    return build_server()


class _AlwaysJson(BaseContentNegotiation):
    """MCP clients accept `application/json, text/event-stream`; the view's own
    errors (401, 403, 429) are JSON whatever the Accept header asks."""

    def select_parser(self, request, parsers):
        return None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def session_token(*, api_key_id: str, client_name: str | None) -> str:
    return signing.dumps({"k": api_key_id, "c": client_name or ""}, salt=SESSION_SALT, compress=True)


def _session_client(token: str, api_key_id: str) -> tuple[bool, str | None]:
    """(valid for this key, client name) of an `Mcp-Session-Id`."""
    try:
        data = signing.loads(token, salt=SESSION_SALT)
    except signing.BadSignature:
        return False, None
    if not isinstance(data, dict) or data.get("k") != api_key_id:
        return False, None
    return True, data.get("c") or None


def _initialize_client(message: Any) -> tuple[bool, str | None]:
    """(is an `initialize` request, the client's declared name) of the parsed body."""
    messages = message if isinstance(message, list) else [message]
    for entry in messages:
        if isinstance(entry, dict) and entry.get("method") == "initialize":
            params = entry.get("params")
            info = params.get("clientInfo") if isinstance(params, dict) else None
            name = info.get("name") if isinstance(info, dict) else None
            return True, name if isinstance(name, str) else None
    return False, None


def _rpc_error(code: int, message: str, status: int) -> JsonResponse:
    return JsonResponse({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}, status=status)


def _parsed_body(request: Request) -> tuple[bytes, Any] | JsonResponse:
    """The body and its value through the REST API's own strict parser (UTF-8,
    size, nesting depth, finite numbers, no NUL or lone surrogate), so a
    hostile body is a JSON-RPC parse error here and never reaches the SDK's
    decoder (5,000 levels of nesting were a RecursionError there) or the
    database (PostgreSQL refuses NUL)."""
    try:
        body = request.body
    except RequestDataTooBig:
        return _rpc_error(-32600, "The request body is too large.", 413)
    try:
        return body, decode_json_bytes(body)
    except ParseError as exc:
        return _rpc_error(-32700, f"Parse error: {exc.detail}", 400)


def _session_not_found() -> JsonResponse:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}
    return JsonResponse(body, status=404)


def _scope(request: Request, caller: Caller) -> dict[str, Any]:
    meta = request.META
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in request.headers.items()]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode("utf-8"),
        "root_path": "",
        "query_string": meta.get("QUERY_STRING", "").encode("latin-1"),
        "headers": headers,
        "client": (meta.get("REMOTE_ADDR") or "", 0),
        "server": (meta.get("SERVER_NAME") or "", int(meta.get("SERVER_PORT") or 0)),
        "state": {},
        CALLER_SCOPE_KEY: caller,
    }


async def _exchange(scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Run one HTTP exchange through the SDK's stateless session manager."""
    status = 500
    headers: list[tuple[bytes, bytes]] = []
    chunks: list[bytes] = []
    delivered = False
    done = anyio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = message["status"], list(message.get("headers") or [])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                done.set()

    manager = StreamableHTTPSessionManager(app=mcp_server(), stateless=True, json_response=True)
    async with manager.run():
        await manager.handle_request(scope, receive, send)
    done.set()
    return status, headers, b"".join(chunks)


@extend_schema(exclude=True)
class McpView(APIView):
    """The MCP endpoint. Read-only keys may POST: the server shows them only
    the read tools and refuses the others as tool errors."""

    action = "mcp"
    read_only_safe_actions = ("mcp",)
    parser_classes: list = []
    content_negotiation_class = _AlwaysJson

    def post(self, request: Request) -> HttpResponse:
        parsed = _parsed_body(request)
        if isinstance(parsed, JsonResponse):
            return parsed
        body, message = parsed
        is_initialize, client_name = _initialize_client(message)
        token = request.headers.get(SESSION_HEADER)
        if token and not is_initialize:
            valid, client_name = _session_client(token, request.auth.pk)
            if not valid:
                return _session_not_found()
        caller = Caller(api_key=request.auth, client_name=client_name)
        status, headers, content = async_to_sync(_exchange)(_scope(request, caller), body)
        response = HttpResponse(content, status=status)
        for name, value in headers:
            if name.lower() != b"content-length":
                response[name.decode("latin-1")] = value.decode("latin-1")
        if is_initialize and status == 200:
            response[SESSION_HEADER] = session_token(api_key_id=request.auth.pk, client_name=client_name)
        return response

    def get(self, request: Request) -> HttpResponse:
        body = {"jsonrpc": "2.0", "id": None,
                "error": {"code": -32000, "message": "Method Not Allowed: this server opens no server-to-client stream."}}
        return JsonResponse(body, status=405, headers={"Allow": "POST, DELETE"})

    def delete(self, request: Request) -> HttpResponse:
        return HttpResponse(status=204)
