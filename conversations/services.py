"""Writes to conversations, branches and messages.

Every function is keyword-only and owns its transaction. A write that changes a
conversation's messages or counters first takes the conversation row lock
(`conversation_lock`), so appends, deletes, clears and forks of one
conversation are serialized: `message_count` and `last_message_at` stay exact,
the 10,000-message cap holds under concurrency, and floor numbers are handed out
in commit order (which is what keeps keyset cursors from skipping a message).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from accounts.models import Workspace
from conversations.models import (
    MAIN_BRANCH,
    MAX_CONTENT_BYTES,
    MAX_CONVERSATION_ID_BYTES,
    MAX_MESSAGES_PER_CONVERSATION,
    Branch,
    Conversation,
    Message,
    Role,
)
from conversations.selectors import MAX_BRANCH_DEPTH
from memories.services.scopes import (
    branch_scope_id,
    scope_note_appended,
    scope_note_cleared,
    scope_note_conversation_deleted,
)
from memory_project.errors import ConflictError, NotFoundError, QuotaExceededError, ValidationError


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()

MAX_IDEMPOTENCY_KEY_CHARS = 255
MAX_BRANCH_NAME_CHARS = 128
MAX_USER_ID_CHARS = 256


# --- Validation -----------------------------------------------------------------


def _has_control_chars(value: str) -> bool:
    return any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in value)


def validate_conversation_id(external_id: Any) -> str:
    """A caller's conversation id: 1..256 bytes of UTF-8 that survive a URL path.

    Any character may be used (percent-encoded by the client) except `/`,
    control characters and the dot segments `.` / `..`, which HTTP clients and
    servers rewrite before the request reaches us.
    """
    if not isinstance(external_id, str) or not external_id:
        raise ValidationError("conversation_id: must be a non-empty string.")
    if len(external_id.encode("utf-8")) > MAX_CONVERSATION_ID_BYTES:
        raise ValidationError(f"conversation_id: must be at most {MAX_CONVERSATION_ID_BYTES} bytes of UTF-8.")
    if "/" in external_id:
        raise ValidationError("conversation_id: must not contain '/' (it cannot travel in a URL path segment).")
    if _has_control_chars(external_id):
        raise ValidationError("conversation_id: must not contain control characters.")
    if external_id in {".", ".."}:
        raise ValidationError("conversation_id: '.' and '..' are not allowed (URL dot segments).")
    return external_id


def _validate_user_id(user_id: Any) -> str | None:
    if user_id is None:
        return None
    if not isinstance(user_id, str) or not user_id or len(user_id) > MAX_USER_ID_CHARS:
        raise ValidationError(f"user_id: must be a non-empty string of at most {MAX_USER_ID_CHARS} characters.")
    return user_id


def _validate_metadata(metadata: Any, *, name: str = "metadata") -> dict[str, Any]:
    if not isinstance(metadata, dict):
        raise ValidationError(f"{name}: must be an object.")
    return metadata


def _validate_role(role: Any) -> str:
    if role not in Role.values:
        raise ValidationError(f"role: must be one of {', '.join(Role.values)}.")
    return role


def content_size(content: Any) -> int:
    """Serialized size in bytes (compact JSON, UTF-8), the unit of the 50 MB limit."""
    if isinstance(content, bool) or not isinstance(content, (str, list, dict)):
        raise ValidationError("content: must be a string, an array or an object.")
    return len(json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _validate_content(content: Any) -> int:
    size = content_size(content)
    if size > MAX_CONTENT_BYTES:
        raise ValidationError(f"content: {size} bytes serialized; the limit is {MAX_CONTENT_BYTES} bytes.")
    return size


def _validate_branch_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_BRANCH_NAME_CHARS:
        raise ValidationError(f"branch: must be a non-empty name of at most {MAX_BRANCH_NAME_CHARS} characters.")
    if _has_control_chars(name):
        raise ValidationError("branch: must not contain control characters.")
    return name


def estimate_tokens(content: Any) -> int:
    """A cheap token estimate: CJK characters count one each, other text ~4 chars a token."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    wide = sum(1 for ch in text if ord(ch) >= 0x2E80)
    return wide + (len(text) - wide + 3) // 4


# --- Locks and creation ---------------------------------------------------------


def conversation_lock(*, workspace: Workspace, external_id: str) -> Conversation | None:
    """Lock the conversation row (`SELECT ... FOR UPDATE`); call inside a transaction.

    Every write that touches a conversation's messages takes this lock first and
    nothing else locks two conversations, so there is no lock-order deadlock.
    """
    return Conversation.objects.select_for_update().filter(workspace=workspace, external_id=external_id).first()


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
            conversation = Conversation.objects.create(
                workspace=workspace, external_id=external_id, user_id=user_id, metadata=metadata or {}, source=source
            )
            # No messages yet: the creation time is the list's sort key.
            conversation.last_message_at = conversation.created_at
            conversation.save(update_fields=["last_message_at"])
            Branch.objects.create(conversation=conversation, name=MAIN_BRANCH)
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
    user_id = _validate_user_id(user_id)
    with transaction.atomic():
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
    metadata = {k: v for k, v in _validate_metadata(metadata or {}).items() if v is not None}
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
        _validate_metadata(metadata)
    if user_id is not UNSET:
        user_id = _validate_user_id(user_id)
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
        if user_id is not UNSET:
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
        scope_ids = [branch_scope_id(external_id, name) for name in conversation.branches.values_list("name", flat=True)]
        transaction.on_commit(partial(scope_note_conversation_deleted, workspace_id=workspace.pk, scope_ids=scope_ids))
        conversation.delete()


# --- Messages -------------------------------------------------------------------


@dataclass(frozen=True)
class AppendResult:
    message: Message
    conversation: Conversation
    branch_name: str
    created: bool  # False: an idempotent replay of an earlier append


class _IdempotencyRace(Exception):
    """Another transaction committed the same idempotency key first."""


def _replay(
    existing: Message, *, external_id: str, branch_name: str, role: str, content: Any, metadata: dict[str, Any]
) -> AppendResult:
    """The earlier append answering a retry, or 409 when the key was used for a different message."""
    same = (
        existing.conversation.external_id == external_id
        and existing.branch.name == branch_name
        and existing.role == role
        # An edited message no longer shows what was sent; the key still names it.
        and (existing.updated_at is not None or (existing.content == content and existing.metadata == metadata))
    )
    if not same:
        raise ConflictError("Idempotency-Key was already used for a different message.")
    return AppendResult(message=existing, conversation=existing.conversation, branch_name=branch_name, created=False)


def _idempotent_message(workspace: Workspace, key: str) -> Message | None:
    return (
        Message.objects.filter(workspace=workspace, idempotency_key=key)
        .select_related("conversation", "branch")
        .first()
    )


def message_append(
    *,
    workspace: Workspace,
    external_id: str,
    role: str,
    content: Any,
    metadata: dict[str, Any] | None = None,
    user_id: str | None = None,
    branch: str = MAIN_BRANCH,
    idempotency_key: str | None = None,
    source: str = "api",
) -> AppendResult:
    """Append a message to a branch, creating the conversation when it is new.

    Raises `QuotaExceededError` at 10,000 messages, `NotFoundError` for a branch
    other than `main` that does not exist. With an `idempotency_key` (unique per
    workspace) a retry returns the first append (`created=False`) and writes
    nothing; the same key with a different message is a `ConflictError`.
    """
    external_id = validate_conversation_id(external_id)
    role = _validate_role(role)
    size = _validate_content(content)
    metadata = _validate_metadata(metadata if metadata is not None else {})
    user_id = _validate_user_id(user_id)
    branch_name = _validate_branch_name(branch)
    if idempotency_key is not None and (not idempotency_key or len(idempotency_key) > MAX_IDEMPOTENCY_KEY_CHARS):
        raise ValidationError(f"Idempotency-Key: must be 1..{MAX_IDEMPOTENCY_KEY_CHARS} characters.")
    replay_args = {"external_id": external_id, "branch_name": branch_name, "role": role, "content": content}

    try:
        with transaction.atomic():
            conversation, _ = _conversation_lock_or_create(
                workspace=workspace, external_id=external_id, user_id=user_id, metadata=None, source=source
            )
            if idempotency_key is not None:
                existing = _idempotent_message(workspace, idempotency_key)
                if existing is not None:
                    return _replay(existing, metadata=metadata, **replay_args)
            if conversation.message_count >= MAX_MESSAGES_PER_CONVERSATION:
                raise QuotaExceededError(
                    f"Conversation '{external_id}' already holds {MAX_MESSAGES_PER_CONVERSATION} messages, the maximum."
                )
            target = Branch.objects.filter(conversation=conversation, name=branch_name).first()
            if target is None and branch_name == MAIN_BRANCH:
                target = Branch.objects.create(conversation=conversation, name=MAIN_BRANCH)
            if target is None:
                raise NotFoundError(f"Branch '{branch_name}' not found in conversation '{external_id}'.")
            floor_no = target.next_floor_no
            target.next_floor_no = floor_no + 1
            target.save(update_fields=["next_floor_no"])
            row = Message(
                workspace=workspace,
                conversation=conversation,
                branch=target,
                floor_no=floor_no,
                role=role,
                content=content,
                metadata=metadata,
                content_size_bytes=size,
                token_estimate=estimate_tokens(content),
                idempotency_key=idempotency_key,
            )
            if idempotency_key is None:
                # The row lock makes the floor unique; nothing else can collide.
                row.save(force_insert=True)
            else:
                try:
                    with transaction.atomic():
                        row.save(force_insert=True)
                except IntegrityError:
                    raise _IdempotencyRace
            message = row
            conversation.message_count += 1
            conversation.last_message_at = message.created_at
            fields = ["message_count", "last_message_at"]
            if user_id is not None and user_id != conversation.user_id:
                conversation.user_id = user_id
                fields.append("user_id")
            conversation.save(update_fields=fields)
            # Memory extraction counts the new floor once it is committed.
            transaction.on_commit(
                partial(
                    scope_note_appended,
                    workspace_id=workspace.pk,
                    conversation_id=conversation.pk,
                    branch_id=target.pk,
                    floors=1,
                    tokens=message.token_estimate,
                )
            )
    except _IdempotencyRace:
        # The same key was committed for another conversation meanwhile; our
        # transaction rolled back whole, so the earlier append is the answer.
        existing = _idempotent_message(workspace, idempotency_key or "")
        if existing is None:
            raise ConflictError("Idempotency-Key is being used by a concurrent request; retry.")
        return _replay(existing, metadata=metadata, **replay_args)
    return AppendResult(message=message, conversation=conversation, branch_name=branch_name, created=True)


def _message_lock(*, conversation: Conversation, message_id: str) -> Message:
    message = (
        Message.objects.select_for_update().filter(conversation=conversation, pk=message_id).select_related("branch")
    ).first()
    if message is None:
        raise NotFoundError(f"Message '{message_id}' not found in conversation '{conversation.external_id}'.")
    return message


def message_update(
    *, workspace: Workspace, external_id: str, message_id: str, content: Any = UNSET, metadata: Any = UNSET
) -> Message:
    """Overwrite the given fields (`metadata` is replaced whole) and stamp `updated_at`."""
    if content is UNSET and metadata is UNSET:
        raise ValidationError("Give content and/or metadata to update.")
    fields = ["updated_at"]
    size = None
    if content is not UNSET:
        size = _validate_content(content)
    if metadata is not UNSET:
        _validate_metadata(metadata)
    with transaction.atomic():
        conversation = Conversation.objects.filter(workspace=workspace, external_id=external_id).first()
        if conversation is None:
            raise NotFoundError(f"Conversation '{external_id}' not found.")
        message = _message_lock(conversation=conversation, message_id=message_id)
        if size is not None:
            message.content = content
            message.content_size_bytes = size
            message.token_estimate = estimate_tokens(content)
            fields += ["content", "content_size_bytes", "token_estimate"]
        if metadata is not UNSET:
            message.metadata = metadata
            fields.append("metadata")
        message.updated_at = timezone.now()
        message.save(update_fields=fields)
    message.conversation = conversation
    return message


def _refresh_last_message_at(conversation: Conversation) -> None:
    newest = Message.objects.filter(conversation=conversation).aggregate(newest=Max("created_at"))["newest"]
    conversation.last_message_at = newest or conversation.created_at


def message_delete(*, workspace: Workspace, external_id: str, message_id: str) -> None:
    """Delete one message; its floor number is never handed out again."""
    with transaction.atomic():
        conversation = conversation_lock(workspace=workspace, external_id=external_id)
        if conversation is None:
            raise NotFoundError(f"Conversation '{external_id}' not found.")
        deleted, _ = Message.objects.filter(conversation=conversation, pk=message_id).delete()
        if not deleted:
            raise NotFoundError(f"Message '{message_id}' not found in conversation '{external_id}'.")
        conversation.message_count = max(conversation.message_count - 1, 0)
        _refresh_last_message_at(conversation)
        conversation.save(update_fields=["message_count", "last_message_at"])


def messages_clear(*, workspace: Workspace, external_id: str) -> int:
    """Delete every message of every branch; keep the conversation, its metadata and branches.

    Returns how many messages were deleted.
    """
    with transaction.atomic():
        conversation = conversation_lock(workspace=workspace, external_id=external_id)
        if conversation is None:
            raise NotFoundError(f"Conversation '{external_id}' not found.")
        # The total would include rows cascaded from messages; count messages only.
        _, per_model = Message.objects.filter(conversation=conversation).delete()
        deleted = per_model.get(Message._meta.label, 0)
        transaction.on_commit(partial(scope_note_cleared, workspace_id=workspace.pk, conversation_id=conversation.pk))
        conversation.message_count = 0
        conversation.last_message_at = conversation.created_at
        conversation.save(update_fields=["message_count", "last_message_at"])
    return deleted


# --- Branches -------------------------------------------------------------------


def branch_create(*, workspace: Workspace, external_id: str, name: str, from_message_id: str) -> Branch:
    """Fork a branch at a message: it shows that message's branch up to it, then its own floors.

    The fork's own floors start right after the fork message's floor.
    """
    name = _validate_branch_name(name)
    if not isinstance(from_message_id, str) or not from_message_id:
        raise ValidationError("from_message_id: required.")
    with transaction.atomic():
        conversation = conversation_lock(workspace=workspace, external_id=external_id)
        if conversation is None:
            raise NotFoundError(f"Conversation '{external_id}' not found.")
        fork = Message.objects.filter(conversation=conversation, pk=from_message_id).select_related("branch").first()
        if fork is None:
            raise NotFoundError(f"Message '{from_message_id}' not found in conversation '{external_id}'.")
        if Branch.objects.filter(conversation=conversation, name=name).exists():
            raise ConflictError(f"Branch '{name}' already exists in conversation '{external_id}'.")
        depth, parent = 1, fork.branch
        while parent.parent_id is not None:
            depth += 1
            parent = Branch.objects.only("parent_id").get(pk=parent.parent_id)
        if depth >= MAX_BRANCH_DEPTH:
            raise ValidationError(f"from_message_id: forks may nest at most {MAX_BRANCH_DEPTH} levels deep.")
        return Branch.objects.create(
            conversation=conversation,
            name=name,
            parent=fork.branch,
            fork_message_id=fork.pk,
            fork_floor_no=fork.floor_no,
            next_floor_no=fork.floor_no + 1,
        )
