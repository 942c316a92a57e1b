"""Small helpers for the conversations API tests."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote


def conv_url(cid: str, suffix: str = "") -> str:
    return f"/v1/conversations/{quote(cid, safe='')}{suffix}"


def append(api, cid: str, content: Any = "hi", role: str = "user", **extra: Any):
    headers = {}
    if "idempotency_key" in extra:
        headers["HTTP_IDEMPOTENCY_KEY"] = extra.pop("idempotency_key")
    return api.post(conv_url(cid, "/messages"), {"role": role, "content": content, **extra}, format="json", **headers)


def append_ok(api, cid: str, content: Any = "hi", role: str = "user", **extra: Any) -> dict[str, Any]:
    response = append(api, cid, content, role, **extra)
    assert response.status_code == 201, response.content
    return response.json()["data"]


def claude_append(api, **body: Any):
    """POST a Claude session append (`project_key`, `session_id`, `entries`)."""
    return api.post("/v1/claude_sessions/append", body, format="json")


def messages(api, cid: str, **params: Any):
    return api.get(conv_url(cid, "/messages"), params)


def assert_error(response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.content)
    body = response.json()
    assert body["type"] == "error"
    assert body["error"]["type"] == code
    assert body["error"]["message"]
    return body["error"]
