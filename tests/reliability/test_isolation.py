"""Tenant isolation, walked over every route of the URL conf.

Workspace A gets one of each object; then every (route, method) under `v1/`
is called with A's ids by: another workspace's key (404 or an empty list, and
never a trace of A), A's read-only key (403 on writes unless the view declares
the action read-only safe), and revoked or malformed keys (401). Afterwards
every row A owns is exactly as it was.
"""

from __future__ import annotations

import json

import pytest

from accounts.backup import _row, workspace_models
from accounts.services import api_key_create, api_key_revoke
from tests.reliability.world import SAFE_METHODS, SECRET, Route, World, api_routes, build_world, client_for, is_empty

pytestmark = pytest.mark.django_db

# Fields a permitted read may stamp (context assembly marks what it used).
VOLATILE_FIELDS = {"last_used_at"}


def _snapshot(workspace_id: str) -> dict[str, list[dict]]:
    snap: dict[str, list[dict]] = {}
    for model, lookup in workspace_models():
        rows = []
        for obj in model._base_manager.filter(**{lookup: workspace_id}).order_by("pk"):
            row = _row(obj)
            row["fields"] = {k: v for k, v in row["fields"].items() if k not in VOLATILE_FIELDS}
            rows.append(row)
        snap[model._meta.label_lower] = rows
    return snap


@pytest.fixture
def world(api, workspace) -> World:
    return build_world(api, workspace)


def _call(client, route: Route, world: World, *, with_query: bool = False):
    url = route.url(world.params_for(route))
    if route.method in SAFE_METHODS:
        return getattr(client, route.method)(url, world.query() if with_query else None)
    return getattr(client, route.method)(url, world.body(), format="json")


def _leaks(response, world: World, route: Route) -> list[str]:
    text = response.content.decode("utf-8", "replace")
    sent = route.url(world.params_for(route)) + json.dumps(world.body()) + json.dumps(world.query())
    return [marker for marker in world.markers if marker in text and marker not in sent]


def test_the_walk_finds_the_api():
    templates = {route.template for route in api_routes()}
    for expected in ("v1/conversations", "v1/memories", "v1/memory_stores"):
        assert expected in templates, sorted(templates)


def _json(response):
    if response.content and response["Content-Type"].startswith("application/json"):
        return response.json()
    return None


def test_another_workspace_sees_nothing_and_changes_nothing(world, workspace, other_api):
    before = _snapshot(workspace.pk)
    failures = []
    routes = api_routes()
    # Reads first: until B writes, B owns nothing, so every read must come back
    # 404 or empty. (B's writes may then create B's own objects under the same
    # business ids, e.g. a conversation "iso-conv-A" of its own.)
    for route in [r for r in routes if r.method in SAFE_METHODS]:
        for with_query in (False, True):
            response = _call(other_api, route, world, with_query=with_query)
            status, body = response.status_code, _json(response)
            leaks = _leaks(response, world, route)
            if route.method == "head":
                if status >= 500 or status in (401, 403):
                    failures.append(f"{route} -> {status}")
            elif leaks:
                failures.append(f"{route} -> {status} shows A's {leaks}")
            elif status == 200 and route.params and not is_empty(body):
                failures.append(f"{route} -> 200 with {str(body)[:200]} (expected 404 or an empty list)")
            elif status not in (200, 400, 404):
                failures.append(f"{route} -> unexpected {status} {response.content[:200]!r}")
    for route in [r for r in routes if r.method not in SAFE_METHODS]:
        response = _call(other_api, route, world)
        status = response.status_code
        leaks = _leaks(response, world, route)
        if status >= 500 or status in (401, 403):
            failures.append(f"{route} -> {status} {response.content[:200]!r}")
        elif leaks:
            failures.append(f"{route} -> {status} shows A's {leaks}")
    assert not failures, "\n".join(failures)
    assert _snapshot(workspace.pk) == before


def test_read_only_key_is_refused_on_every_write_route(world, workspace, readonly_api):
    before = _snapshot(workspace.pk)
    failures = []
    writes = [route for route in api_routes() if route.method not in SAFE_METHODS]
    assert writes
    for route in writes:
        response = _call(readonly_api, route, world)
        if route.read_only_safe:
            if response.status_code >= 500 or response.status_code == 401:
                failures.append(f"{route} (read-only safe) -> {response.status_code}")
        elif response.status_code != 403 or response.json()["error"]["type"] != "permission_error":
            failures.append(f"{route} -> {response.status_code}, expected 403")
    for route in api_routes():
        if route.method in SAFE_METHODS:
            status = _call(readonly_api, route, world).status_code
            if status in (401, 403) or status >= 500:
                failures.append(f"{route} read with a read-only key -> {status}")
    assert not failures, "\n".join(failures)
    assert _snapshot(workspace.pk) == before


def test_read_only_key_cannot_write_through_read_only_safe_actions(world, workspace, readonly_api):
    """Routes open to read-only keys (tools, LangGraph store batch) still refuse
    the writes they can carry."""
    before = _snapshot(workspace.pk)
    store_id = world.values["store_id"]
    response = readonly_api.post(
        f"/v1/memory_stores/{store_id}/tools/memory_write", {"input": {"path": "/x.md", "content": "ro"}}, format="json"
    )
    assert response.status_code == 403 or (response.status_code == 200 and response.json().get("is_error") is True)
    _ = readonly_api.post(
        "/v1/langgraph_store/batch",
        {"store_id": store_id, "ops": [{"type": "put", "namespace": ["a"], "key": "k", "value": {"v": 1}}]},
        format="json",
    )
    assert _ != 500 and _.status_code in (400, 403, 404), (_.status_code, _.content[:300])
    assert _snapshot(workspace.pk) == before


def test_revoked_and_malformed_keys_are_401_everywhere(world, workspace, anon_api):
    revoked = api_key_create(workspace=workspace, name="gone")
    api_key_revoke(api_key=revoked.api_key)
    clients = {
        "revoked": client_for(revoked.raw_key),
        "malformed": client_for("mk_nope"),
        "unknown": client_for("mk_000000000000_" + "x" * 43),
        "none": anon_api,
    }
    before = _snapshot(workspace.pk)
    failures = []
    for route in api_routes():
        for name, client in clients.items():
            response = _call(client, route, world)
            body = _json(response) or {"error": {"type": "authentication_error"}}  # HEAD has no body
            if response.status_code != 401 or body["error"]["type"] != "authentication_error":
                failures.append(f"{route} with {name} key -> {response.status_code}")
    assert not failures, "\n".join(failures)
    assert _snapshot(workspace.pk) == before


def _mcp(client, method: str, params: dict | None = None):
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return client.post("/mcp", message, format="json", HTTP_ACCEPT="application/json, text/event-stream")


def test_the_mcp_endpoint_shows_another_workspace_nothing(world, workspace, other_api, readonly_api, anon_api):
    """`/mcp` walked like the routes: every tool and resource called by
    another workspace's key with A's ids, A's read-only key on every write
    tool, and no key at all."""
    before = _snapshot(workspace.pk)
    v, doc = world.values, world.store_values
    calls = {
        "memory_list": {"store_id": v["store_id"]},
        "memory_search": {"store_id": v["store_id"], "query": SECRET},
        "memory_read": {"store_id": v["store_id"], "path": "/notes/plan.md"},
        "memory_write": {"store_id": v["store_id"], "path": "/notes/plan.md", "content": "intruder"},
        "memory_edit": {"store_id": v["store_id"], "path": "/notes/plan.md", "old_str": SECRET, "new_str": "x"},
        "memory_delete": {"store_id": v["store_id"], "path": "/notes/plan.md"},
        "recall": {"query": SECRET, "conversation_id": world.conversation_id},
        "remember": {"content": "written by another workspace"},
        "forget": {"memory_id": v["memory_id"], "mode": "delete"},
        "list_memories": {"conversation_id": world.conversation_id},
    }
    failures = []
    listed = _mcp(other_api, "tools/list").json()["result"]["tools"]
    assert {tool["name"] for tool in listed} == set(calls)
    for name, arguments in calls.items():
        response = _mcp(other_api, "tools/call", {"name": name, "arguments": arguments})
        result = response.json().get("result", {})
        leaks = [marker for marker in world.markers if marker in response.content.decode() and marker not in str(arguments)]
        if leaks:
            failures.append(f"{name} shows A's {leaks}")
        if name != "remember" and not result.get("isError"):
            failures.append(f"{name} with A's ids -> {result}")
    # A's global memories ("... fact v2", "... other") are not B's global ones.
    for arguments in ({"query": "other fact"}, {"query": "other fact", "user_id": "u"}):
        text = _mcp(other_api, "tools/call", {"name": "recall", "arguments": arguments}).content.decode()
        assert SECRET not in text
    assert SECRET not in _mcp(other_api, "tools/call", {"name": "list_memories", "arguments": {"query": "fact"}}).content.decode()
    resources = _mcp(other_api, "resources/list").json()["result"]
    assert resources["resources"] == [] and resources.get("nextCursor") is None
    for uri in (f"memory://stores/{v['store_id']}/notes/plan.md", f"memory://conversations/{world.conversation_id}/summary"):
        error = _mcp(other_api, "resources/read", {"uri": uri}).json()["error"]
        assert error["code"] == -32002 and SECRET not in error["message"], error
    # A's read-only key: every write tool refused as a tool error.
    for tool in ("memory_write", "memory_edit", "memory_delete", "remember", "forget"):
        arguments = {**calls[tool], "store_id": v["store_id"]} if tool.startswith("memory_") else calls[tool]
        if tool == "forget":
            arguments = {"memory_id": doc["memory_id"]}
        result = _mcp(readonly_api, "tools/call", {"name": tool, "arguments": arguments}).json()["result"]
        if not (result["isError"] and "read-only" in result["content"][0]["text"]):
            failures.append(f"read-only key: {tool} -> {result}")
    assert _mcp(anon_api, "tools/list").status_code == 401
    assert not failures, "\n".join(failures)
    assert _snapshot(workspace.pk) == before
