"""Writes to existing messages: edit, delete, clear.

Each first locks the conversation row (`conversation_lock`) or the message
row, like an append (`conversations.services.append`), so the counters and
the memory pipeline's pending work stay exact; what follows from the change
(lineage erasure) is announced after the commit through `conversations.hooks`.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import F, Max
from django.db.models.functions import Greatest
from django.utils import timezone

import conversations.hooks as hooks
from accounts.models import Workspace
from conversations.hooks import (
    BranchRef,
    MessageDeleted,
    MessageEdited,
    MessagesCleared,
    send_on_commit,
)
from conversations.models import Branch, Conversation, Message
from conversations.services.conversations import conversation_lock
from conversations.services.validation import (
    UNSET,
    validate_content,
    validate_metadata,
)
from memory_project.errors import NotFoundError, ValidationError
from memory_project.tokens import estimate_tokens

# A batch append is one INSERT and one commit; 100 messages of ordinary size
# is well under a second of work and one request body.




def _message_lock(*, conversation: Conversation, message_id: str) -> Message:
    message = (
        Message.objects.select_for_update().filter(conversation=conversation, pk=message_id).select_related("branch")
    ).first()
    if message is None:
        raise NotFoundError(f"Message '{message_id}' not found in conversation '{conversation.external_id}'.")
    return message


def _unread_tokens_changed(*, message: Message, delta: int) -> None:
    """Keep the branch's pending tokens right when a floor the memory pipeline
    has not read yet changes size or goes away."""
    if delta:
        Branch.objects.filter(pk=message.branch_id, processed_floor_no__lt=message.floor_no).update(
            appended_tokens=Greatest(F("appended_tokens") + delta, 0)
        )


def message_update(
    *, workspace: Workspace, external_id: str, message_id: str, content: Any = UNSET, metadata: Any = UNSET
) -> Message:
    """Overwrite the given fields (`metadata` is replaced whole) and stamp `updated_at`."""
    if content is UNSET and metadata is UNSET:
        raise ValidationError("Give content and/or metadata to update.")
    fields = ["updated_at"]
    size = None
    if content is not UNSET:
        size = validate_content(content)
    if metadata is not UNSET:
        validate_metadata(metadata)
    with transaction.atomic():
        conversation = Conversation.objects.filter(workspace=workspace, external_id=external_id).first()
        if conversation is None:
            raise NotFoundError(f"Conversation '{external_id}' not found.")
        message = _message_lock(conversation=conversation, message_id=message_id)
        if size is not None:
            tokens = estimate_tokens(content)
            _unread_tokens_changed(message=message, delta=tokens - message.token_estimate)
            message.content = content
            message.content_size_bytes = size
            message.token_estimate = tokens
            fields += ["content", "content_size_bytes", "token_estimate"]
        if metadata is not UNSET:
            message.metadata = metadata
            fields.append("metadata")
        message.updated_at = timezone.now()
        message.save(update_fields=fields)
        send_on_commit(
            hooks.message_edited,
            MessageEdited(**_event_fields(workspace, conversation, external_id, message),
                          content_changed=size is not None),
        )
    message.conversation = conversation
    return message


def _event_fields(workspace: Workspace, conversation: Conversation, external_id: str, message: Message) -> dict:
    """What the signals of one message's change say of it (`MessageEdited`,
    `MessageDeleted`)."""
    return {"workspace_id": workspace.pk, "conversation_id": conversation.pk, "external_id": external_id,
            "branch": BranchRef(id=message.branch_id, name=message.branch.name), "message_id": message.pk,
            "floor_no": message.floor_no}


def _refresh_last_message_at(conversation: Conversation) -> None:
    newest = Message.objects.filter(conversation=conversation).aggregate(newest=Max("created_at"))["newest"]
    conversation.last_message_at = newest or conversation.created_at


def message_delete(*, workspace: Workspace, external_id: str, message_id: str) -> None:
    """Delete one message; its floor number is never handed out again."""
    with transaction.atomic():
        conversation = conversation_lock(workspace=workspace, external_id=external_id)
        if conversation is None:
            raise NotFoundError(f"Conversation '{external_id}' not found.")
        message = (
            Message.objects.filter(conversation=conversation, pk=message_id)
            .select_related("branch")
            .only("pk", "floor_no", "token_estimate", "branch__id", "branch__name")
            .first()
        )
        if message is None:
            raise NotFoundError(f"Message '{message_id}' not found in conversation '{external_id}'.")
        Message.objects.filter(pk=message.pk).delete()
        _unread_tokens_changed(message=message, delta=-message.token_estimate)
        conversation.message_count = max(conversation.message_count - 1, 0)
        _refresh_last_message_at(conversation)
        conversation.save(update_fields=["message_count", "last_message_at"])
        send_on_commit(
            hooks.message_deleted,
            MessageDeleted(**_event_fields(workspace, conversation, external_id, message)),
        )


def messages_clear(*, workspace: Workspace, external_id: str) -> int:
    """Delete every message of every branch; keep the conversation, its metadata and branches.

    Nothing is left for the memory pipeline to read: each branch's processed
    counters move to its last floor (floor numbers are never reused).
    Returns how many messages were deleted.
    """
    with transaction.atomic():
        conversation = conversation_lock(workspace=workspace, external_id=external_id)
        if conversation is None:
            raise NotFoundError(f"Conversation '{external_id}' not found.")
        # The total would include rows cascaded from messages; count messages only.
        _, per_model = Message.objects.filter(conversation=conversation).delete()
        deleted = per_model.get(Message._meta.label, 0)
        branches = list(conversation.branches.values_list("pk", "name", "next_floor_no"))
        conversation.branches.update(processed_floor_no=F("next_floor_no") - 1, processed_tokens=F("appended_tokens"))
        conversation.message_count = 0
        conversation.last_message_at = conversation.created_at
        conversation.save(update_fields=["message_count", "last_message_at"])
        send_on_commit(
            hooks.messages_cleared,
            MessagesCleared(
                workspace_id=workspace.pk,
                conversation_id=conversation.pk,
                external_id=external_id,
                branches=tuple(BranchRef(id=pk, name=name) for pk, name, _ in branches),
                last_floor_nos={pk: next_floor_no - 1 for pk, _, next_floor_no in branches},
                deleted_count=deleted,
            ),
        )
    return deleted
