"""Writes to conversations themselves: creation, the row lock, metadata, deletion."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

import conversations.hooks as hooks
from accounts.models import Workspace
from conversations.hooks import BranchRef, ConversationDeleted, send_on_commit
from conversations.models import MAIN_BRANCH, Branch, Conversation, Message
from conversations.services.validation import UNSET, validate_conversation_id, validate_metadata, validate_user_id
from memory_project.errors import ConflictError, NotFoundError, ValidationError


def conversation_lock(*, workspace: Workspace, external_id: str) -> Conversation | None:
    """Lock the conversation row (`SELECT ... FOR UPDATE`); call inside a transaction.

    Every write that touches a conversation's messages takes this lock first and
    nothing else locks two conversations, so there is no lock-order deadlock.
    """
    return Conversation.objects.select_for_update().filter(workspace=workspace, external_id=external_id).first()


def new_conversation(
    *, workspace: Workspace, external_id: str, user_id: str | None = None, metadata: dict[str, Any] | None = None,
    source: str = "api",
) -> tuple[Conversation, Branch]:
    """A new conversation and its `main` branch, unsaved, as creation stores
    them (the branch's conversation is set once the conversation has its
    key). Both creation paths build their rows here: the ORM's below and the
    one-statement creation of the LangGraph checkpoint batch."""
    now = timezone.now()
    # No messages yet: the creation time is the list's sort key.
    conversation = Conversation(
        workspace=workspace, external_id=external_id, user_id=user_id, metadata=metadata or {}, source=source,
        created_at=now, last_message_at=now,
    )
    return conversation, Branch(name=MAIN_BRANCH, created_at=now)


def _conversation_lock_or_create(
    *, workspace: Workspace, external_id: str, user_id: str | None, metadata: dict[str, Any] | None, source: str
) -> tuple[Conversation, bool]:
    """The locked conversation, created (with its `main` branch) when missing.

    Relies on the caller's transaction. Two first appends may race to create the
    same id: the loser's insert hits the unique constraint (on PostgreSQL it
    waits for the winner's commit), its savepoint rolls back, and it locks the
    winner's row instead.
    """
    conversation = conversation_lock(workspace=workspace, external_id=external_id)
    if conversation is not None:
        return conversation, False
    try:
        with transaction.atomic():
            conversation, branch = new_conversation(
                workspace=workspace, external_id=external_id, user_id=user_id, metadata=metadata, source=source
            )
            conversation.save(force_insert=True)
            # The save stamped its own creation time (`auto_now_add`): the sort key follows it.
            conversation.last_message_at = conversation.created_at
            conversation.save(update_fields=["last_message_at"])
            branch.conversation = conversation
            branch.save(force_insert=True)
        return conversation, True
    except IntegrityError:
        conversation = conversation_lock(workspace=workspace, external_id=external_id)
        if conversation is None:
            raise
        return conversation, False


def conversation_get_or_create(
    *,
    workspace: Workspace,
    external_id: str,
    user_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    source: str = "api",
) -> tuple[Conversation, bool]:
    """Find or create a conversation (race-free); adapters create conversations through this."""
    external_id = validate_conversation_id(external_id)
    user_id = validate_user_id(user_id)
    # A transaction for the row lock; inside a caller's, no savepoint of its
    # own (the create's savepoint is what a lost race rolls back).
    with transaction.atomic(savepoint=False):
        return _conversation_lock_or_create(
            workspace=workspace, external_id=external_id, user_id=user_id, metadata=metadata, source=source
        )


def conversation_create(
    *,
    workspace: Workspace,
    external_id: str,
    user_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    source: str = "api",
) -> Conversation:
    """Create a conversation explicitly; 409 when the id is taken. Null metadata values are dropped."""
    metadata = {k: v for k, v in validate_metadata(metadata or {}).items() if v is not None}
    conversation, created = conversation_get_or_create(
        workspace=workspace, external_id=external_id, user_id=user_id, metadata=metadata, source=source
    )
    if not created:
        raise ConflictError(f"Conversation '{external_id}' already exists.")
    return conversation


def conversation_update(
    *, workspace: Workspace, external_id: str, metadata: Any = UNSET, user_id: Any = UNSET
) -> Conversation:
    """Shallow-merge `metadata` (a null value deletes its key) and/or set `user_id`."""
    if metadata is UNSET and user_id is UNSET:
        raise ValidationError("Give metadata and/or user_id to update.")
    if metadata is not UNSET:
        validate_metadata(metadata)
    if user_id is not UNSET:
        user_id = validate_user_id(user_id)
    with transaction.atomic():
        conversation = conversation_lock(workspace=workspace, external_id=external_id)
        if conversation is None:
            raise NotFoundError(f"Conversation '{external_id}' not found.")
        fields = []
        if metadata is not UNSET:
            merged = dict(conversation.metadata or {})
            for key, value in metadata.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            conversation.metadata = merged
            fields.append("metadata")
        if user_id is not UNSET and user_id != conversation.user_id:
            if conversation.user_id is not None:
                # Its floors were written by that user and their facts filed
                # under that user's scope: another user cannot take them over.
                raise ConflictError(
                    f"Conversation '{external_id}' belongs to user_id '{conversation.user_id}'; "
                    "a conversation's user is fixed once set."
                )
            conversation.user_id = user_id
            fields.append("user_id")
        conversation.save(update_fields=fields)
    return conversation


def conversation_delete(*, workspace: Workspace, external_id: str) -> None:
    """Delete the conversation with its branches, messages and attachments, for good."""
    with transaction.atomic():
        conversation = conversation_lock(workspace=workspace, external_id=external_id)
        if conversation is None:
            raise NotFoundError(f"Conversation '{external_id}' not found.")
        # Messages first in one statement: the cascade collector would otherwise
        # walk them branch by branch.
        Message.objects.filter(conversation=conversation).delete()
        branches = tuple(BranchRef(id=pk, name=name) for pk, name in conversation.branches.values_list("pk", "name"))
        send_on_commit(
            hooks.conversation_deleted,
            ConversationDeleted(
                workspace_id=workspace.pk, conversation_id=conversation.pk, external_id=external_id, branches=branches
            ),
        )
        conversation.delete()
