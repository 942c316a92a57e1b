"""Memory stores, their memories and versions, and the agent tools (specs 001 / 004),
each operation described once as a `Call`."""

from __future__ import annotations

from typing import Any

from memory_client._transport import (
    Call,
    body_of,
    page_of,
    seg,
)


def create_store(*, name: str, description: str | None = None, metadata: dict[str, str] | None = None) -> Call:
    body = {"name": name, **({"description": description} if description is not None else {}),
            **({"metadata": metadata} if metadata is not None else {})}
    return Call("POST", "memory_stores", json=body, parse=body_of)


def get_store(*, store_id: str) -> Call:
    return Call("GET", f"memory_stores/{seg(store_id)}", parse=body_of)


def update_store(*, store_id: str, **body: Any) -> Call:
    return Call("POST", f"memory_stores/{seg(store_id)}", json=body, parse=body_of, retry=True)


def list_stores(*, limit: int | None = None, page: str | None = None, include_archived: bool | None = None) -> Call:
    return Call("GET", "memory_stores", params={"limit": limit, "page": page, "include_archived": include_archived},
                parse=page_of)


def archive_store(*, store_id: str) -> Call:
    return Call("POST", f"memory_stores/{seg(store_id)}/archive", parse=body_of, retry=True)


def delete_store(*, store_id: str) -> Call:
    return Call("DELETE", f"memory_stores/{seg(store_id)}", parse=body_of)


def list_store_memories(
    *, store_id: str, path_prefix: str | None = None, depth: int | None = None, limit: int | None = None,
    view: str | None = None, page: str | None = None,
) -> Call:
    params = {"path_prefix": path_prefix, "depth": depth, "limit": limit, "view": view, "page": page}
    return Call("GET", f"memory_stores/{seg(store_id)}/memories", params=params, parse=page_of)


def write_store_memory(
    *, store_id: str, path: str, content: str, precondition: dict[str, Any] | None = None, view: str | None = None
) -> Call:
    """Upsert by path (`precondition={"type": "not_exists"}` makes it create-only).
    Safe to retry: writing the same content twice changes nothing."""
    body = {"path": path, "content": content, **({"precondition": precondition} if precondition else {})}
    return Call("POST", f"memory_stores/{seg(store_id)}/memories", params={"view": view}, json=body, parse=body_of,
                retry=True)


def get_store_memory(*, store_id: str, memory_id: str, view: str | None = None) -> Call:
    return Call("GET", f"memory_stores/{seg(store_id)}/memories/{seg(memory_id)}", params={"view": view}, parse=body_of)


def update_store_memory(
    *, store_id: str, memory_id: str, content: str | None = None, path: str | None = None,
    precondition: dict[str, Any] | None = None, view: str | None = None,
) -> Call:
    body = {key: value for key, value in (("content", content), ("path", path), ("precondition", precondition))
            if value is not None}
    return Call("POST", f"memory_stores/{seg(store_id)}/memories/{seg(memory_id)}", params={"view": view}, json=body,
                parse=body_of, retry=precondition is not None)


def put_store_memory(*, store_id: str, memory_id: str, content: str, version: int) -> Call:
    return Call("PUT", f"memory_stores/{seg(store_id)}/memories/{seg(memory_id)}",
                json={"content": content, "version": version}, parse=body_of)


def delete_store_memory(*, store_id: str, memory_id: str, expected_content_sha256: str | None = None) -> Call:
    return Call("DELETE", f"memory_stores/{seg(store_id)}/memories/{seg(memory_id)}",
                params={"expected_content_sha256": expected_content_sha256}, parse=body_of)


def list_store_memory_versions(*, store_id: str, **params: Any) -> Call:
    return Call("GET", f"memory_stores/{seg(store_id)}/memory_versions", params=params, parse=page_of)


def get_store_memory_version(*, store_id: str, version_id: str, view: str | None = None) -> Call:
    return Call("GET", f"memory_stores/{seg(store_id)}/memory_versions/{seg(version_id)}", params={"view": view},
                parse=body_of)


def redact_store_memory_version(*, store_id: str, version_id: str) -> Call:
    return Call("POST", f"memory_stores/{seg(store_id)}/memory_versions/{seg(version_id)}/redact", parse=body_of,
                retry=True)


def list_store_tools(*, store_id: str, format: str | None = None, conversation_id: str | None = None) -> Call:
    """`{"format", "memory_store_id", "data": [tool definitions]}`; `format` is
    `anthropic` (default), `openai` or `openai_responses`. With a conversation
    the store must be attached to it (read-only attachments list the read tools)."""
    return Call("GET", f"memory_stores/{seg(store_id)}/tools",
                params={"format": format, "conversation_id": conversation_id}, parse=body_of)


def call_store_tool(
    *, store_id: str, name: str, input: dict[str, Any] | None = None, conversation_id: str | None = None
) -> Call:
    """Runs one memory tool: `{"type": "tool_result", "tool_name", "is_error",
    "content", "output", "error"?}`. A mistake the model can fix is an
    `is_error` result, not an exception. Not retried: write tools are not idempotent."""
    body: dict[str, Any] = {"input": {} if input is None else input}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    return Call("POST", f"memory_stores/{seg(store_id)}/tools/{seg(name)}", json=body, parse=body_of)


def list_agent_tools() -> Call:
    """`{"data": [{"name", "title", "description", "input_schema", "read_only", "destructive"}]}`:
    the MCP server's tools (memory stores and conversation memory); a read-only
    key gets only the tools that do not write."""
    return Call("GET", "agent_tools", parse=body_of)


def call_agent_tool(*, name: str, input: dict[str, Any] | None = None, client_name: str | None = None) -> Call:
    """Runs one of the MCP server's tools: a `tool_result` as `call_store_tool`
    gives. `client_name` (an MCP client's name) is recorded with the key as the
    actor of what it writes. Not retried: write tools are not idempotent."""
    body: dict[str, Any] = {"input": {} if input is None else input}
    if client_name is not None:
        body["client_name"] = client_name
    return Call("POST", f"agent_tools/{seg(name)}", json=body, parse=body_of)


PUBLIC = [name for name, value in list(globals().items()) if callable(value) and not name.startswith("_")
          and getattr(value, "__module__", None) == __name__]
__all__ = PUBLIC
