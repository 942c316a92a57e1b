"""The bare address says what lives there, the API docs fetch nothing from
elsewhere, and a client adapter whose framework is missing says which extra
installs it."""

from __future__ import annotations

import sys

import pytest

from memory_client import MemoryClient

pytestmark = pytest.mark.django_db


def test_the_root_lists_where_things_are(client):
    response = client.get("/")
    assert response.status_code == 200
    body = response.json()
    assert body["docs"] == "/v1/docs/" and body["healthz"] == "/healthz" and body["readyz"] == "/readyz"


def test_redoc_fetches_nothing_from_a_cdn(client):
    page = client.get("/v1/redoc/").content.decode()
    assert "Content-Security-Policy" in page and "img-src 'self'" in page
    assert "googleapis" not in page and "cdn." not in page.split("<script", 1)[0]


def test_a_missing_framework_names_its_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "claude_agent_sdk", None)
    monkeypatch.delitem(sys.modules, "memory_client.adapters.claude", raising=False)
    memory = MemoryClient(base_url="http://127.0.0.1:9", api_key="mk_test")
    with pytest.raises(ImportError, match=r"memory-client\[claude\]") as raised:
        memory.claude_session_store()
    assert not isinstance(raised.value, ModuleNotFoundError)
    memory.close()
