"""Conversations and messages (spec 000), each operation described once as a `Call`."""

from __future__ import annotations

from typing import Any

import httpx

from memory_client._transport import (
    UNSET,
    Call,
    body_of,
    data_of,
    nothing,
    page_of,
    seg,
    strip_unset,
    with_idempotency_key,
)
from memory_client.types import ConversationMeta, ListConversationsResult, Message, Page


def _conversation(response: httpx.Response) -> ConversationMeta:
    return ConversationMeta.from_wire(data_of(response))


def _message(response: httpx.Response) -> Message:
    return Message.from_wire(data_of(response))


def _messages_page(response: httpx.Response) -> Page:
    if response.status_code == 404:
        return Page(data=[])  # spec 000: an unknown conversation has no messages
    page = page_of(response)
    page.data = [Message.from_wire(item) for item in page.data]
    return page


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
    body = strip_unset({"content": content, "metadata": metadata})
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
    return Call("PATCH", f"conversations/{seg(conversation_id)}", json=strip_unset({"metadata": metadata, "user_id": user_id}),
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


PUBLIC = [name for name, value in list(globals().items()) if callable(value) and not name.startswith("_")
          and getattr(value, "__module__", None) == __name__]
__all__ = PUBLIC
