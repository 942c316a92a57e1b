"""One of every object in a workspace, made through the API where an endpoint
exists (so ids and scopes are what a real client gets), and the URL conf
walked as data so a new route is covered without anyone listing it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from rest_framework.test import APIClient

# Text that exists only in workspace A: seeing any of it in another
# workspace's response is a leak, whatever the route.
SECRET = "SECRET-A-7f3c"

# Documentation routes are public by design.
PUBLIC_ROUTE_NAMES = {"schema", "api-docs", "api-redoc"}
SAFE_METHODS = {"get", "head", "options"}


@dataclass
class Route:
    template: str  # "v1/memories/{memory_id}"
    method: str  # lower case
    view_class: type
    action: str | None
    params: list[str]

    @property
    def read_only_safe(self) -> bool:
        return self.action in getattr(self.view_class, "read_only_safe_actions", ())

    def url(self, values: dict[str, str]) -> str:
        path = self.template
        for name in self.params:
            path = path.replace("{" + name + "}", quote(str(values[name]), safe=""))
        return "/" + path

    def __str__(self) -> str:
        return f"{self.method.upper()} /{self.template}"


def _template(pattern: Any) -> tuple[str, list[str]]:
    text = str(pattern.pattern)
    params: list[str] = []
    text = text.removeprefix("^").removesuffix("$").removesuffix("\\Z")

    def named(match: re.Match) -> str:
        params.append(match.group(1))
        return "{" + match.group(1) + "}"

    text = re.sub(r"\(\?P<(\w+)>[^)]*\)", named, text)
    text = re.sub(r"<(?:\w+:)?(\w+)>", named, text)
    return text, params


def _walk(patterns, prefix: str = "", params: list[str] | None = None):
    for pattern in patterns:
        template, names = _template(pattern)
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + template, (params or []) + names)
        elif isinstance(pattern, URLPattern):
            yield prefix + template, (params or []) + names, pattern


def api_routes() -> list[Route]:
    """Every (route, method) under `v1/` from the live URL conf."""
    routes: list[Route] = []
    for template, params, pattern in _walk(get_resolver().url_patterns):
        if not template.startswith("v1/") or pattern.name in PUBLIC_ROUTE_NAMES:
            continue
        callback = pattern.callback
        actions = getattr(callback, "actions", None)
        view_class = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
        if actions:
            items = sorted(actions.items())
        else:
            methods = [m for m in view_class.http_method_names if m not in ("options", "head") and hasattr(view_class, m)]
            items = [(m, None) for m in methods]
        for method, action in items:
            routes.append(Route(template, method, view_class, action, params))
    return routes


def client_for(raw_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    return client


def _ok(response, *codes: int) -> dict:
    assert response.status_code in codes, (response.status_code, response.content[:500])
    return response.json() if response.content else {}


@dataclass
class World:
    """Workspace A's objects: path parameter values and the texts that must
    never show up elsewhere."""

    conversation_id: str
    values: dict[str, str]
    store_values: dict[str, str]
    markers: set[str] = field(default_factory=set)

    def params_for(self, route: Route) -> dict[str, str]:
        under_stores = route.template.startswith("v1/memory_stores")
        merged = {**self.values, **(self.store_values if under_stores else {})}
        missing = [name for name in route.params if name not in merged]
        assert not missing, f"{route}: no value for path parameter(s) {missing}; add them to tests/reliability/world.py"
        return merged

    def body(self) -> dict[str, Any]:
        """A write body naming A's objects in every field a route might read."""
        v = self.values
        return {
            "conversation_id": self.conversation_id,
            "from_id": v["memory_id"],
            "to_id": self.store_values["memory_id"],
            "ids": [v["memory_id"], self.store_values["memory_id"]],
            "memory_id": v["memory_id"],
            "memory_store_id": v["store_id"],
            "store_id": v["store_id"],
            "status": "deprecated",
            "lifecycle_status": "deprecated",
            "relation": "contradicts",
            "role": "user",
            "content": "written by another workspace",
            "name": "intruder",
            "path": "/intruder.md",
            "from_message_id": v["message_id"],
            "version": 1,
            "importance": 0.1,
            "metadata": {"x": "intruder"},
            "resources": [{"type": "memory_store", "memory_store_id": v["store_id"]}],
            "input": {},
            "thread_id": self.conversation_id,
            "session_id": self.conversation_id,
            "source_thread_id": self.conversation_id,
            "target_thread_id": "intruder-thread",
            "thread_ids": [self.conversation_id],
            "key": {"project_key": "/proj", "session_id": self.conversation_id},
            "entries": [{"type": "user", "uuid": "intruder"}],
            "items": [{"role": "user", "content": "intruder"}],
            "ops": [{"type": "search", "namespace_prefix": []}],
            "scope": "chat",
            "scope_id": self.conversation_id,
        }

    def query(self) -> dict[str, str]:
        v = self.values
        return {
            "conversation_id": self.conversation_id,
            "scope_id": self.conversation_id,
            "thread_id": self.conversation_id,
            "session_id": self.conversation_id,
            "project_key": "/proj",
            "store_id": v["store_id"],
            "memory_id": v["memory_id"],
            "q": SECRET,
        }


def build_world(api: APIClient, workspace) -> World:
    """Create A's objects with A's client `api`."""
    from memories.models import JobKind, JobStatus, MemoryJob, MemoryVersion, ScopeState

    cid = "iso-conv-A"
    first = _ok(api.post(f"/v1/conversations/{cid}/messages", {"role": "user", "content": f"{SECRET} hello"}, format="json"), 201)
    first = first.get("data", first)
    second = _ok(api.post(f"/v1/conversations/{cid}/messages", {"role": "assistant", "content": f"{SECRET} reply"}, format="json"), 201)
    second = second.get("data", second)
    _ok(api.post(f"/v1/conversations/{cid}/branches", {"name": "alt", "from_message_id": first["id"]}, format="json"), 201)

    fact = _ok(api.post("/v1/memories", {"scope": "chat", "scope_id": cid, "type": "fact", "content": f"{SECRET} fact"}, format="json"), 201)["data"]
    other = _ok(api.post("/v1/memories", {"scope": "global", "type": "fact", "content": f"{SECRET} other"}, format="json"), 201)["data"]
    _ok(api.patch(f"/v1/memories/{fact['id']}", {"content": f"{SECRET} fact v2"}, format="json"), 200)
    edge = _ok(api.post("/v1/memory_edges", {"from_id": fact["id"], "to_id": other["id"], "relation": "supports"}, format="json"), 201)["data"]

    store = _ok(api.post("/v1/memory_stores", {"name": f"{SECRET} store", "description": SECRET}, format="json"), 200, 201)
    doc = _ok(api.post(f"/v1/memory_stores/{store['id']}/memories", {"path": "/notes/plan.md", "content": f"{SECRET} doc"}, format="json"), 200, 201)
    doc = _ok(api.post(f"/v1/memory_stores/{store['id']}/memories/{doc['id']}", {"content": f"{SECRET} doc v2"}, format="json"), 200)
    _ok(api.put(f"/v1/conversations/{cid}/resources", {"resources": [{"type": "memory_store", "memory_store_id": store["id"]}]}, format="json"), 200)

    job = MemoryJob.objects.create(
        workspace=workspace, kind=JobKind.EXTRACT, scope="chat", scope_id=cid, status=JobStatus.FAILED,
        attempts=1, error=f"{SECRET} failure", finished_at=timezone.now(),
    )
    ScopeState.objects.get_or_create(workspace=workspace, scope="chat", scope_id=cid)

    fact_version = MemoryVersion.objects.filter(memory_id=fact["id"]).order_by("version").first()
    doc_version = MemoryVersion.objects.filter(memory_id=doc["id"]).order_by("version").first()
    values = {
        "conversation_id": cid,
        "message_id": second["id"],
        "memory_id": fact["id"],
        "version_id": fact_version.pk,
        "edge_id": edge["id"],
        "store_id": store["id"],
        "tool_name": "memory_list",
        "session_id": cid,
        "job_id": job.pk,
        "scope": "chat",
        "scope_id": cid,
        "branch": "alt",
        "branch_name": "alt",
    }
    store_values = {"memory_id": doc["id"], "version_id": doc_version.pk}
    from conversations.models import Branch

    branch_ids = set(Branch.objects.filter(conversation__workspace=workspace).values_list("pk", flat=True))
    markers = branch_ids | {SECRET, first["id"], second["id"], fact["id"], other["id"], edge["id"], store["id"], doc["id"], job.pk,
               fact_version.pk, doc_version.pk}
    return World(conversation_id=cid, values=values, store_values=store_values, markers=markers)


def is_empty(body: Any) -> bool:
    """An empty list, or an object whose lists are all empty (e.g. a
    conversation's attached stores: `{"conversation_id": ..., "resources": []}`)."""
    data = body.get("data", body) if isinstance(body, dict) else body
    if isinstance(data, list):
        return not data
    if isinstance(data, dict):
        lists = [value for value in data.values() if isinstance(value, list)]
        return bool(lists) and not any(lists)
    return False
