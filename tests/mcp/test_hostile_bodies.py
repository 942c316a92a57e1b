"""`/mcp` reads its body with the REST API's strict JSON parser and limits
(nesting depth, NUL and lone surrogates, size, finite numbers) and answers a
JSON-RPC error, never a 500; every integer argument of its tools has a ceiling."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from memories.models import MemoryItem
from tests.factories import make_api_key

pytestmark = pytest.mark.django_db(transaction=True)

HEADERS = {"HTTP_ACCEPT": "application/json, text/event-stream"}


@pytest.fixture
def mcp(workspace):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_api_key(workspace)}")

    def post(raw: bytes):
        return client.generic("POST", "/mcp", raw, content_type="application/json", **HEADERS)

    return post


def _call(name: str, arguments: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode()


@pytest.mark.parametrize("raw", [
    b"[" * 5000 + b"]" * 5000,
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5001,
    b"{",
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": 1e999}}',
    "{\"x\": \"\xff\"}".encode("latin-1"),
])
def test_malformed_or_hostile_json_is_a_parse_error(mcp, raw):
    response = mcp(raw)
    assert response.status_code == 400
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["error"]["code"] == -32700


def test_nul_in_tool_arguments_never_reaches_the_database(mcp, workspace):
    raw = _call("remember", {"content": "nul \u0000 inside", "user_id": "u1"})
    assert b"\\u0000" in raw
    response = mcp(raw)
    assert response.status_code == 400 and response.json()["error"]["code"] == -32700
    assert not MemoryItem.objects.filter(workspace=workspace).exists()


def test_an_oversized_body_is_refused(mcp, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = mcp(_call("remember", {"content": "x" * 5000, "user_id": "u1"}))
    # Refused before any view, in the API's error shape, or by the view as JSON-RPC.
    assert response.status_code in (400, 413)
    error = response.json()["error"]
    assert error.get("code") in (-32600, -32700) or error.get("type") in ("invalid_request_error",
                                                                          "quota_exceeded_error")


@pytest.mark.parametrize("arguments", [{"offset": 10**20}, {"offset": 1_000_001}, {"limit": 10**20}])
def test_list_memories_integer_arguments_have_a_ceiling(mcp, arguments):
    response = mcp(_call("list_memories", arguments))
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True


def test_a_good_call_still_works(mcp):
    response = mcp(_call("list_memories", {"offset": 5}))
    assert response.status_code == 200 and response.json()["result"]["isError"] is False


def test_rest_store_list_depth_has_a_ceiling(api):
    store = api.post("/v1/memory_stores", {"name": "s"}, format="json").json()
    response = api.get(f"/v1/memory_stores/{store['id']}/memories", {"depth": 10**20})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
