"""OpenAI Agents SDK sessions: a session's items are the messages of a conversation.

An item becomes a message with a role a reader understands (`user`,
`assistant`, `system`, `tool`) and the item's `content` as the message content;
the item's other fields ride in `metadata.openai_item`, so reading gives back
exactly the item that was added. Messages appended through the plain API read
as `{"role", "content"}` items.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from accounts.models import Workspace
from conversations.models import MAIN_BRANCH, Conversation, FrameworkSource, Message, Role
from conversations.services import (
    conversation_lock,
    message_delete,
    messages_append,
    messages_clear,
    new_message,
    validate_conversation_id,
)
from framework_state.services.common import clean_list
from memory_project.errors import ValidationError

MAX_ITEMS_PER_ADD = 1000
ITEM_METADATA_KEY = "openai_item"
_ROLE_OF_ITEM_ROLE = {"user": Role.USER, "assistant": Role.ASSISTANT, "system": Role.SYSTEM, "developer": Role.SYSTEM}


def item_to_message(item: dict[str, Any]) -> tuple[str, Any, dict[str, Any]]:
    """(role, content, metadata) of the message that stores an item."""
    item_role = item.get("role")
    item_type = item.get("type")
    if isinstance(item_role, str) and item_role in _ROLE_OF_ITEM_ROLE:
        role = _ROLE_OF_ITEM_ROLE[item_role]
    elif isinstance(item_type, str) and item_type.endswith("_output"):
        role = Role.TOOL  # function_call_output, computer_call_output ...
    else:
        role = Role.ASSISTANT  # function calls, reasoning and other model output
    content = item.get("content")
    if "content" in item and not isinstance(content, bool) and isinstance(content, (str, list, dict)):
        fields = {key: value for key, value in item.items() if key != "content"}
        return role, content, {ITEM_METADATA_KEY: {"fields": fields, "content": True}}
    return role, item, {ITEM_METADATA_KEY: {"fields": {}, "content": False}}


def message_to_item(*, role: str, content: Any, metadata: dict[str, Any] | None) -> dict[str, Any]:
    shape = (metadata or {}).get(ITEM_METADATA_KEY)
    if isinstance(shape, dict) and isinstance(shape.get("fields"), dict):
        if shape.get("content"):
            return {**shape["fields"], "content": content}
        if isinstance(content, dict):
            return content
    return {"role": role, "content": content}


def _clean_items(items: Any) -> list[dict[str, Any]]:
    items = clean_list(items, field="items", max_items=MAX_ITEMS_PER_ADD)
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ValidationError(f"items[{index}]: must be an object.")
    return items


def session_items_add(
    *, workspace: Workspace, session_id: str, items: Any, idempotency_key: str | None = None
) -> int:
    """Append the items in order, all or none, as one batch append (one
    INSERT). With an idempotency key a retry of the same batch writes nothing
    and reports the items it added the first time."""
    items = _clean_items(items)
    session_id = validate_conversation_id(session_id, field="session_id")
    if not items:
        return 0
    batch = []
    for index, item in enumerate(items):
        role, content, metadata = item_to_message(item)
        key = f"{idempotency_key}:{index}" if idempotency_key else None
        batch.append(new_message(role=role, content=content, metadata=metadata, idempotency_key=key,
                                 prefix=f"items[{index}]."))
    messages_append(
        workspace=workspace,
        external_id=session_id,
        messages=batch,
        source=FrameworkSource.OPENAI_AGENTS,
        max_messages=MAX_ITEMS_PER_ADD,
    )
    return len(items)


def _main_messages(conversation: Conversation):
    return Message.objects.filter(conversation=conversation, branch__name=MAIN_BRANCH)


def session_item_pop(*, workspace: Workspace, session_id: str) -> dict[str, Any] | None:
    """Remove and return the newest item, or None when the session is empty."""
    with transaction.atomic():
        conversation = conversation_lock(workspace=workspace, external_id=session_id)
        if conversation is None:
            return None
        # The conversation lock serializes this with appends, so the newest
        # floor cannot change between the read and the delete.
        last = _main_messages(conversation).order_by("-floor_no").first()
        if last is None:
            return None
        item = message_to_item(role=last.role, content=last.content, metadata=last.metadata)
        message_delete(workspace=workspace, external_id=session_id, message_id=last.pk)
    return item


def session_items_clear(*, workspace: Workspace, session_id: str) -> int:
    """Delete every item; the conversation (its metadata, its memories) stays."""
    with transaction.atomic():
        if conversation_lock(workspace=workspace, external_id=session_id) is None:
            return 0
        return messages_clear(workspace=workspace, external_id=session_id)
