"""Every REST operation, described once as a `Call`; `MemoryClient` and
`AsyncMemoryClient` run the same descriptions over httpx (sync / async)."""

from __future__ import annotations

from typing import Any

import httpx

from memory_client._transport import Call, body_of, data_of, nothing, seg, with_idempotency_key
from memory_client.types import ConversationMeta, ListConversationsResult, Message, Page

UNSET: Any = object()


def _strip(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if value is not UNSET}


def _conversation(response: httpx.Response) -> ConversationMeta:
    return ConversationMeta.from_wire(data_of(response))


def _message(response: httpx.Response) -> Message:
    return Message.from_wire(data_of(response))


def _page(response: httpx.Response) -> Page:
    """`{"data": [...], "meta": {...}}` (conversations, items) or `{"data", "next_page"}` (stores)."""
    body = body_of(response) or {}
    meta = body.get("meta") or {}
    cursor = meta.get("next_cursor") if "next_page" not in body else body.get("next_page")
    return Page(data=list(body.get("data") or []), next_cursor=cursor, meta=meta)


def _messages_page(response: httpx.Response) -> Page:
    if response.status_code == 404:
        return Page(data=[])  # spec 000: an unknown conversation has no messages
    page = _page(response)
    page.data = [Message.from_wire(item) for item in page.data]
    return page


# --- Conversations and messages (spec 000) ---------------------------------------


def append_message(
    *,
    conversation_id: str,
    role: str,
    content: Any,
    metadata: dict[str, Any] | None = None,
    user_id: str | None = None,
    branch: str | None = None,
    idempotency_key: str | None = None,
) -> Call:
    """Returns the new message id. An `Idempotency-Key` is sent (generated when not
    given), so a retried append never writes the message twice."""
    body: dict[str, Any] = {"role": role, "content": content}
    for key, value in (("metadata", metadata), ("user_id", user_id), ("branch", branch)):
        if value is not None:
            body[key] = value
    call = Call("POST", f"conversations/{seg(conversation_id)}/messages", json=body,
                parse=lambda r: data_of(r)["message_id"])
    return with_idempotency_key(call, idempotency_key)


def append_messages(
    *,
    conversation_id: str,
    messages: list[dict[str, Any]],
    user_id: str | None = None,
    branch: str | None = None,
    idempotency_key: str | None = None,
) -> Call:
    """Append up to 100 messages (`{"role", "content", "metadata"?, "idempotency_key"?}`)
    in order, all or none, in one request; returns their ids. An `Idempotency-Key`
    is sent (generated when not given): each message without its own key gets
    `<key>:<index>`, so a retried batch is a replay, never a second copy."""
    body: dict[str, Any] = {"messages": list(messages)}
    for key, value in (("user_id", user_id), ("branch", branch)):
        if value is not None:
            body[key] = value
    call = Call("POST", f"conversations/{seg(conversation_id)}/messages", json=body,
                parse=lambda r: [item["message_id"] for item in data_of(r)])
    return with_idempotency_key(call, idempotency_key)


def get_messages_page(
    *, conversation_id: str, limit: int | None = None, order: str | None = None, after: str | None = None,
    before: str | None = None, branch: str | None = None,
) -> Call:
    params = {"limit": limit, "order": order, "after": after, "before": before, "branch": branch}
    return Call("GET", f"conversations/{seg(conversation_id)}/messages", params=params, parse=_messages_page,
                accept=frozenset({404}))


def get_messages(**kwargs: Any) -> Call:
    """`list[Message]` (oldest first by default); `[]` for an unknown conversation."""
    call = get_messages_page(**kwargs)
    call.parse = lambda r: _messages_page(r).data
    return call


def get_formatted_messages(*, conversation_id: str, format: str, **params: Any) -> Call:
    """The service-side conversion (`format=anthropic|openai`) of a page of messages."""
    return Call("GET", f"conversations/{seg(conversation_id)}/messages", params={"format": format, **params})


def update_message(*, conversation_id: str, message_id: str, content: Any = UNSET, metadata: Any = UNSET) -> Call:
    body = _strip({"content": content, "metadata": metadata})
    return Call("PATCH", f"conversations/{seg(conversation_id)}/messages/{seg(message_id)}", json=body,
                parse=_message, retry=True)


def delete_message(*, conversation_id: str, message_id: str) -> Call:
    return Call("DELETE", f"conversations/{seg(conversation_id)}/messages/{seg(message_id)}", parse=nothing)


def clear_messages(*, conversation_id: str) -> Call:
    return Call("DELETE", f"conversations/{seg(conversation_id)}/messages", parse=nothing)


def create_conversation(*, conversation_id: str, user_id: str | None = None, metadata: dict | None = None) -> Call:
    body = {"conversation_id": conversation_id, **({"user_id": user_id} if user_id else {}),
            **({"metadata": metadata} if metadata is not None else {})}
    return Call("POST", "conversations", json=body, parse=_conversation)


def get_conversation(*, conversation_id: str) -> Call:
    return Call("GET", f"conversations/{seg(conversation_id)}", parse=_conversation)


def list_conversations(
    *, limit: int | None = None, order: str | None = None, after: str | None = None, before: str | None = None,
    user_id: str | None = None, source: str | None = None,
) -> Call:
    def parse(response: httpx.Response) -> ListConversationsResult:
        body = body_of(response)
        meta = body.get("meta") or {}
        return ListConversationsResult(
            items=[ConversationMeta.from_wire(item) for item in body.get("data") or []],
            next_cursor=meta.get("next_cursor"),
            previous_cursor=meta.get("previous_cursor"),
        )

    params = {"limit": limit, "order": order, "after": after, "before": before, "user_id": user_id, "source": source}
    return Call("GET", "conversations", params=params, parse=parse)


def update_conversation(*, conversation_id: str, metadata: Any = UNSET, user_id: Any = UNSET) -> Call:
    """Shallow-merges `metadata` (a `None` value deletes its key)."""
    return Call("PATCH", f"conversations/{seg(conversation_id)}", json=_strip({"metadata": metadata, "user_id": user_id}),
                parse=_conversation, retry=True)


def delete_conversation(*, conversation_id: str) -> Call:
    return Call("DELETE", f"conversations/{seg(conversation_id)}", parse=nothing)


def create_branch(*, conversation_id: str, name: str, from_message_id: str) -> Call:
    return Call("POST", f"conversations/{seg(conversation_id)}/branches",
                json={"name": name, "from_message_id": from_message_id})


def list_branches(*, conversation_id: str) -> Call:
    return Call("GET", f"conversations/{seg(conversation_id)}/branches")


def get_context(*, conversation_id: str, **body: Any) -> Call:
    """Context assembly (`POST .../context`): history plus memories chosen under a
    token budget. Only reads, so a retry is safe."""
    return Call("POST", f"conversations/{seg(conversation_id)}/context", json=body, retry=True)


def get_resources(*, conversation_id: str) -> Call:
    """`{"conversation_id", "resources": [...]}`: the memory stores attached to it."""
    return Call("GET", f"conversations/{seg(conversation_id)}/resources")


def set_resources(
    *, conversation_id: str, resources: list[dict[str, Any]] | None = None, memory_store_ids: list[str] | None = None
) -> Call:
    """Replaces the attached stores: full `resources` entries, or the shorthand
    `memory_store_ids` (each attached read-write). A replacement, so a retry is safe."""
    body = {"memory_store_ids": memory_store_ids} if memory_store_ids is not None else {"resources": resources or []}
    return Call("PUT", f"conversations/{seg(conversation_id)}/resources", json=body)


# --- Memory items, edges, jobs, scopes (spec 003) --------------------------------
# Lists are offset pages (`meta.total/limit/offset`); see `Page.next_offset`.
# PATCH bodies set absolute values (a repeat changes nothing more), so they are
# retried; POSTs that add a version or queue work again (restore, job retry,
# rebuild, compact) are not.


def list_memories(**params: Any) -> Call:
    """A `Page` of memories. Filters: user_id (with include_conversations),
    conversation_id, scope, scope_id, type, status, lifecycle_status,
    fact_key, q, importance_min ..., sort_by, sort_order, limit, offset. An
    unknown filter is refused (MemoryValidationError), never ignored."""
    return Call("GET", "memories", params=params, parse=_page)


def search_memories(*, query: str, user_id: str | None = None, conversation_id: str | None = None,
                    **params: Any) -> Call:
    """A `Page` of the memories most relevant to `query` (by meaning and
    words, as the recall index ranks them), best first, each with its
    `score`; in a user's scope (`user_id`), a conversation's
    (`conversation_id`) or `scope` + `scope_id`. Other list filters apply."""
    return Call("GET", "memories", params={"query": query, "user_id": user_id,
                                           "conversation_id": conversation_id, **params}, parse=_page)


def delete_user_memories(*, user_id: str, include_conversations: bool = False) -> Call:
    """Delete every memory of a user, following lineage:
    `{"user_id", "deleted", "ids"}` (the response's `lineage` says what was
    erased with them). Deleting twice deletes nothing more, so it is retried."""
    return Call("DELETE", "memories", params={"user_id": user_id, "include_conversations": include_conversations},
                retry=True)


def create_memory(*, scope: str, type: str, content: Any, **fields: Any) -> Call:
    return Call("POST", "memories", json={"scope": scope, "type": type, "content": content, **fields})


def get_memory(*, memory_id: str) -> Call:
    return Call("GET", f"memories/{seg(memory_id)}")


def update_memory(*, memory_id: str, **changes: Any) -> Call:
    """Changes plus optional `expected_version` / `expected_content_sha256`
    (409 `memory_precondition_failed` when stale)."""
    return Call("PATCH", f"memories/{seg(memory_id)}", json=changes, retry=True)


def delete_memory(*, memory_id: str) -> Call:
    """`{"id", "deleted": True}`."""
    return Call("DELETE", f"memories/{seg(memory_id)}")


def memory_stats(**params: Any) -> Call:
    """Totals over the same filters as `list_memories`."""
    return Call("GET", "memories/stats", params=params)


def batch_update_memory_status(*, ids: list[str], status: str) -> Call:
    """`{"results": [{"id", "result", "changed"?}], "meta": {counts}}`."""
    return Call("PATCH", "memories/batch/status", json={"ids": ids, "status": status}, retry=True)


def batch_delete_memories(*, ids: list[str]) -> Call:
    """`{"results": [{"id", "result"}], "meta": {counts}}`. Deleting twice removes
    nothing more (a repeat reports the ids `not_found`), so it is retried."""
    return Call("POST", "memories/batch/delete", json={"ids": ids}, retry=True)


def list_memory_versions(*, memory_id: str, **params: Any) -> Call:
    return Call("GET", f"memories/{seg(memory_id)}/versions", params=params, parse=_page)


def get_memory_version(*, memory_id: str, version_id: str) -> Call:
    return Call("GET", f"memories/{seg(memory_id)}/versions/{seg(version_id)}")


def redact_memory_version(*, memory_id: str, version_id: str) -> Call:
    """Erases the version's content (idempotent: a redacted version stays redacted)."""
    return Call("POST", f"memories/{seg(memory_id)}/versions/{seg(version_id)}/redact", retry=True)


def restore_memory(*, memory_id: str, version_id: str) -> Call:
    """Writes the version's content back as a new version: not retried, since a
    repeat would add another."""
    return Call("POST", f"memories/{seg(memory_id)}/restore", json={"version_id": version_id}, retry=False)


def list_edges(**params: Any) -> Call:
    """Filters: from_id, to_id, relation, sort_order, limit, offset."""
    return Call("GET", "memory_edges", params=params, parse=_page)


def create_edge(*, from_id: str, to_id: str, relation: str) -> Call:
    return Call("POST", "memory_edges", json={"from_id": from_id, "to_id": to_id, "relation": relation})


def get_edge(*, edge_id: str) -> Call:
    return Call("GET", f"memory_edges/{seg(edge_id)}")


def update_edge(*, edge_id: str, relation: str) -> Call:
    return Call("PATCH", f"memory_edges/{seg(edge_id)}", json={"relation": relation}, retry=True)


def delete_edge(*, edge_id: str) -> Call:
    """`{"id", "deleted": True}`."""
    return Call("DELETE", f"memory_edges/{seg(edge_id)}")


def list_jobs(**params: Any) -> Call:
    """Filters: scope, scope_id, status, kind, limit, offset (newest first)."""
    return Call("GET", "memory_jobs", params=params, parse=_page)


def get_job(*, job_id: str) -> Call:
    return Call("GET", f"memory_jobs/{seg(job_id)}")


def retry_job(*, job_id: str) -> Call:
    """A failed or cancelled job goes back to pending. Not retried: a repeat could
    run the job a second time once the first retry has failed again."""
    return Call("POST", f"memory_jobs/{seg(job_id)}/retry", retry=False)


def cancel_job(*, job_id: str) -> Call:
    """Cancels a pending job, or asks a running one to stop. A repeat asks for the
    same end state, so it is retried (it may answer 409 once cancelled)."""
    return Call("POST", f"memory_jobs/{seg(job_id)}/cancel", retry=True)


def list_scopes(**params: Any) -> Call:
    """Scope states; filters: scope, scope_id, dirty, limit, offset."""
    return Call("GET", "memory_scopes", params=params, parse=_page)


def rebuild_scope(*, scope: str, scope_id: str) -> Call:
    """Queues a rebuild of a branch scope; returns the (pending) job."""
    return Call("POST", "memory_scopes/rebuild", json={"scope": scope, "scope_id": scope_id}, retry=False)


def compact_scope(*, scope: str, scope_id: str = "") -> Call:
    """Queues a compaction of the scope's micro summaries; returns the job."""
    return Call("POST", "memory_scopes/compact", json={"scope": scope, "scope_id": scope_id}, retry=False)


# --- Memory stores, memories, versions, tools (specs 001 / 004) ------------------


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
                parse=_page)


def archive_store(*, store_id: str) -> Call:
    return Call("POST", f"memory_stores/{seg(store_id)}/archive", parse=body_of, retry=True)


def delete_store(*, store_id: str) -> Call:
    return Call("DELETE", f"memory_stores/{seg(store_id)}", parse=body_of)


def list_store_memories(
    *, store_id: str, path_prefix: str | None = None, depth: int | None = None, limit: int | None = None,
    view: str | None = None, page: str | None = None,
) -> Call:
    params = {"path_prefix": path_prefix, "depth": depth, "limit": limit, "view": view, "page": page}
    return Call("GET", f"memory_stores/{seg(store_id)}/memories", params=params, parse=_page)


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
    return Call("GET", f"memory_stores/{seg(store_id)}/memory_versions", params=params, parse=_page)


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
