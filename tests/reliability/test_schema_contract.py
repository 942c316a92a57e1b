"""The published schema says what the server does.

`manage.py spectacular --validate --fail-on-warn` stays clean, and for the
operations whose answers are easy to get wrong (jobs, scopes, clears and
deletes that answer with a body, replays) a real request's status is one the
schema documents for it and its body validates against the documented schema.
The doc pages load their assets from the installed package, never a CDN; an
over-long request line is answered in the JSON error shape."""

from __future__ import annotations

import copy
import re
from typing import Any

import jsonschema
import pytest
from django.core.management import call_command
from django.test import Client

from memories.models import MemoryJob, ScopeState
from tests.conversations.helpers import append

pytestmark = pytest.mark.django_db


def test_spectacular_validates_without_warnings(tmp_path):
    # Raises (and fails the test) on any warning or validation error.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))


@pytest.fixture(scope="module")
def openapi(django_db_blocker) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = Client().get("/v1/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def _nullable_to_jsonschema(node: Any) -> Any:
    """OpenAPI 3.0's `nullable` is not JSON Schema; spell it as `anyOf null`."""
    if isinstance(node, list):
        return [_nullable_to_jsonschema(n) for n in node]
    if not isinstance(node, dict):
        return node
    converted = {k: _nullable_to_jsonschema(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable"):
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


def _operation(openapi: dict, method: str, path: str) -> tuple[str, dict]:
    for template, item in openapi["paths"].items():
        pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
        if re.match(pattern, path) and method in item:
            return template, item[method]
    raise AssertionError(f"{method.upper()} {path} is not in the schema")


def assert_documented(openapi: dict, response, method: str, path: str) -> None:
    template, operation = _operation(openapi, method, path.split("?")[0])
    status = str(response.status_code)
    assert status in operation["responses"], f"{method.upper()} {template} answered {status}, documents {sorted(operation['responses'])}"
    documented = operation["responses"][status]
    body = response.content
    if not body:
        assert "content" not in documented, f"{method.upper()} {template} {status} documents a body it does not send"
        return
    assert "content" in documented, f"{method.upper()} {template} {status} sends a body the schema does not document"
    schema = documented["content"]["application/json"]["schema"]
    root = _nullable_to_jsonschema(copy.deepcopy({"components": openapi["components"], **schema}))
    jsonschema.validate(response.json(), root)


def test_jobs_scopes_clears_and_deletes_answer_as_documented(api, workspace, openapi):
    calls = []

    def call(method: str, path: str, body: dict | None = None):
        response = getattr(api, method)(path, body, format="json") if body is not None else getattr(api, method)(path)
        calls.append((method, path, response.status_code))
        assert_documented(openapi, response, method, path)
        return response

    first = append(api, "c1", "I like green tea.", idempotency_key="k-1")
    assert first.status_code == 201
    assert_documented(openapi, first, "post", "/v1/conversations/c1/messages")
    replay = append(api, "c1", "I like green tea.", idempotency_key="k-1")
    assert replay.status_code == 201 and replay["Idempotent-Replayed"] == "true"
    assert_documented(openapi, replay, "post", "/v1/conversations/c1/messages")

    job = MemoryJob.objects.create(workspace=workspace, kind="extract", scope="chat", scope_id="c1", status="failed", error="boom")
    ScopeState.objects.create(workspace=workspace, scope="branch", scope_id='["c1","main"]', micro_count=3)
    call("get", "/v1/memory_jobs")
    call("get", f"/v1/memory_jobs/{job.pk}")
    assert call("post", f"/v1/memory_jobs/{job.pk}/retry").status_code == 200
    call("get", "/v1/memory_scopes")
    assert call("post", "/v1/memory_scopes/compact", {"scope": "branch", "scope_id": '["c1","main"]'}).status_code == 202
    assert call("post", "/v1/memory_scopes/rebuild", {"scope": "branch", "scope_id": '["c1","main"]'}).status_code == 202

    assert call("delete", "/v1/conversations/c1/messages").status_code == 200
    store = call("post", "/v1/memory_stores", {"name": "Prefs"}).json()
    assert call("delete", f"/v1/memory_stores/{store['id']}").status_code == 200
    assert call("delete", "/v1/conversations/c1").status_code == 204


def test_api_docs_load_their_assets_locally(client):
    for url in ("/v1/docs/", "/v1/redoc/"):
        html = client.get(url).content.decode()
        assets = re.findall(r'(?:src|href)="([^"]+)"', html)
        assert assets, url
        assert not [a for a in assets if a.startswith(("http://", "https://", "//"))], (url, assets)
        for asset in assets:
            if asset.startswith("/static/"):
                assert client.get(asset).status_code == 200, asset


@pytest.mark.parametrize("path", ["/v1/memories", "/admin/", "/healthz"])
def test_a_long_request_line_is_a_json_414(api, path):
    response = api.get(path, {"q": "x" * 9000})
    assert response.status_code == 414
    assert response.json()["type"] == "error"
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_a_long_but_allowed_request_line_passes(api):
    # Over gunicorn's default 4094 bytes, under the service's own limit.
    response = api.get("/healthz", {"pad": "x" * 5000})
    assert response.status_code == 200


@pytest.mark.parametrize("path", ["/v1/conversations", "/admin/", "/healthz"])
def test_a_host_the_service_does_not_answer_for_is_a_json_400(client, path):
    response = client.get(path, HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and "Host" in error["message"]


def test_the_schema_names_the_tokenizer_budgets_count_in(openapi):
    schemas = openapi["components"]["schemas"]
    budget = next(s["properties"]["memory_token_budget"] for s in schemas.values()
                  if "memory_token_budget" in s.get("properties", {}))
    assert "o200k_base" in budget["description"] and "rolling summary" in budget["description"]
    tool_input = next(s["properties"]["input"] for name, s in schemas.items()
                      if name.startswith("AgentToolExecute") and "input" in s.get("properties", {}))
    assert "max_tokens" in tool_input["description"] and "o200k_base" in tool_input["description"]
