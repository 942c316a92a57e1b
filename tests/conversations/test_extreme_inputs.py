"""Inputs at the edge of what a datetime or an integer holds answer 200 or
400, never 500, on both databases."""

from __future__ import annotations

import base64
import json

import pytest

pytestmark = pytest.mark.django_db
# In UTC, the first is in year 0 and the second in year 10000.
BEYOND = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"]


def _cursor(stamp: str, pk: int = 1) -> str:
    return base64.urlsafe_b64encode(json.dumps([stamp, pk]).encode()).decode().rstrip("=")


@pytest.mark.parametrize("stamp", BEYOND)
@pytest.mark.parametrize("param", ["after", "before"])
def test_conversation_cursor_beyond_utc_is_400(api, stamp, param):
    api.post("/v1/conversations/c1/messages", {"role": "user", "content": "hi"}, format="json")
    response = api.get("/v1/conversations", {param: _cursor(stamp)})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    # An extreme instant UTC can hold is an ordinary cursor.
    assert api.get("/v1/conversations", {param: _cursor("0001-01-01T00:00:00+00:00")}).status_code == 200


@pytest.mark.parametrize("stamp", BEYOND)
@pytest.mark.parametrize("bound", ["created_at[gte]", "created_at[lte]"])
def test_created_range_beyond_utc_is_clamped(api, stamp, bound):
    store = api.post("/v1/memory_stores", {"name": "notes"}, format="json").json()
    api.post(f"/v1/memory_stores/{store['id']}/memories", {"path": "/a.md", "content": "a"}, format="json")
    everything = (bound == "created_at[gte]") == stamp.startswith("0001")
    for url in ("/v1/memory_stores", f"/v1/memory_stores/{store['id']}/memory_versions"):
        response = api.get(url, {bound: stamp})
        assert response.status_code == 200, (url, response.content)
        assert bool(response.json()["data"]) == everything, (url, bound, stamp)


def test_openai_session_limit_beyond_any_integer_column(api):
    for i in range(3):
        api.post("/v1/conversations/s1/messages", {"role": "user", "content": f"m{i}"}, format="json")
    for limit in (str(10**30), str(2**63), "10000", "2"):
        response = api.get("/v1/openai_sessions/s1/items", {"limit": limit})
        assert response.status_code == 200, (limit, response.content)
        assert len(response.json()["data"]) == (2 if limit == "2" else 3)
