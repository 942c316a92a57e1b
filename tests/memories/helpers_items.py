"""Shared helpers for the memory item tests."""

from __future__ import annotations

from typing import Any

from accounts.actors import Actor
from memories.services.items import memory_item_create

AGENT = Actor.for_api_key("apikey_test")


def make_item(workspace, **kwargs: Any):
    data: dict[str, Any] = {"scope": "chat", "scope_id": "conv-1", "type": "fact", "content": "likes tea"}
    data.update(kwargs)
    return memory_item_create(workspace=workspace, actor=AGENT, **data)


def error_type(response) -> str:
    body = response.json()
    assert body["type"] == "error", body
    return body["error"]["type"]
