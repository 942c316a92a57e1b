"""Appending messages, one or a batch.

An append is one short transaction of a handful of statements, whatever
listens to it:

1. (only with idempotency keys, before the transaction) one SELECT of the
   keys already used;
2. `UPDATE conversation ... WHERE message_count + n <= cap RETURNING id`: takes
   the conversation row lock, enforces the 10,000-message cap and moves the
   counters in one statement;
3. `UPDATE branch SET next_floor_no = next_floor_no + n ... RETURNING`: hands
   out the floor numbers and returns the counters the memory pipeline's
   pending work is derived from;
4. one multi-row INSERT of the messages.

One path per database: SQLite runs the transaction above (one writer at a
time, in process: round trips cost nothing). PostgreSQL runs the same steps
as one statement (`append_statement`, atomic by itself) outside a caller's
transaction: round trips are the hot write's latency. What the statement
cannot answer (a new or full conversation, a missing branch, a used key) it
leaves unwritten for the transaction path, which also runs inside a caller's
transaction (under a savepoint).

Because every write that changes a conversation's messages first locks its
row (the UPDATE above, or `conversation_lock`), appends, deletes, clears and
forks of one conversation are serialized, and floor numbers are handed out in
commit order (which keeps keyset cursors from skipping a message). Work that
depends on the append (memory extraction) is announced after the commit
through `conversations.hooks`; no second transaction runs per append.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

import conversations.hooks as hooks
from accounts.models import Workspace
from conversations.hooks import (
    BranchRef,
    MessagesAppended,
    send_on_commit,
)
from conversations.models import MAIN_BRANCH, MAX_MESSAGES_PER_CONVERSATION, Branch, Conversation, Message
from conversations.services.append_sql import (
    BranchCounters,
    append_statement,
    branch_floors_take,
    conversation_count_bump,
    keys_used,
)
from conversations.services.conversations import _conversation_lock_or_create
from conversations.services.validation import (
    validate_branch_name,
    validate_content,
    validate_conversation_id,
    validate_idempotency_key,
    validate_metadata,
    validate_role,
    validate_user_id,
)
from memory_project.db import insert_objects
from memory_project.errors import ConflictError, NotFoundError, QuotaExceededError, ValidationError
from memory_project.tokens import estimate_tokens

# A batch append is one INSERT and one commit; 100 messages of ordinary size
# is well under a second of work and one request body.
MAX_MESSAGES_PER_BATCH = 100


@dataclass(frozen=True)
class NewMessage:
    """A validated message waiting to be appended."""

    role: str
    content: Any
    metadata: dict[str, Any]
    size: int
    tokens: int
    idempotency_key: str | None = None


def new_message(
    *, role: Any, content: Any, metadata: Any = None, idempotency_key: Any = None, prefix: str = ""
) -> NewMessage:
    """Validate one message; `prefix` names it in errors (`messages[3].`)."""
    role = validate_role(role, name=f"{prefix}role")
    size = validate_content(content, name=f"{prefix}content")
    metadata = validate_metadata(metadata if metadata is not None else {}, name=f"{prefix}metadata")
    key = validate_idempotency_key(idempotency_key, name=f"{prefix}idempotency_key" if prefix else "Idempotency-Key")
    return NewMessage(
        role=role, content=content, metadata=metadata, size=size, tokens=estimate_tokens(content), idempotency_key=key
    )


@dataclass(frozen=True)
class AppendResult:
    message: Message
    branch_name: str
    created: bool  # False: an idempotent replay of an earlier append


@dataclass(frozen=True)
class BatchAppendResult:
    messages: list[Message]
    branch_name: str
    created: bool  # False: every message is the replay of an earlier append


class _Replayed(Exception):
    """Every idempotency key of the batch names an earlier append: answer with those."""

    def __init__(self, messages: list[Message]):
        self.messages = messages


def _user_conflict(*, external_id: str, held: str | None, given: str | None) -> None:
    if given is not None and held is not None and held != given:
        raise ConflictError(
            f"Conversation '{external_id}' belongs to user_id '{held}'; a conversation's user is fixed once set "
            f"(append without user_id, or with the same one)."
        )


def _same_message(existing: Message, *, external_id: str, branch_name: str, new: NewMessage) -> bool:
    return (
        existing.conversation.external_id == external_id
        and existing.branch.name == branch_name
        and existing.role == new.role
        # An edited message no longer shows what was sent; the key still names it.
        and (existing.updated_at is not None or (existing.content == new.content and existing.metadata == new.metadata))
    )


def _replays(
    workspace: Workspace, *, external_id: str, branch_name: str, messages: Sequence[NewMessage]
) -> list[Message] | None:
    """The earlier appends the batch's idempotency keys name: None when no key
    is known, all of them when every key is (a retry), 409 otherwise."""
    keys = [m.idempotency_key for m in messages if m.idempotency_key is not None]
    if not keys or not keys_used(workspace, keys):
        return None
    found = {
        m.idempotency_key: m
        for m in Message.objects.filter(workspace=workspace, idempotency_key__in=keys).select_related(
            "conversation", "branch"
        )
    }
    if not found:
        return None
    if len(found) != len(messages) or len(keys) != len(messages):
        raise ConflictError("Idempotency-Key: some keys of this batch were already used, others not.")
    replayed = []
    for new in messages:
        existing = found[new.idempotency_key]
        if not _same_message(existing, external_id=external_id, branch_name=branch_name, new=new):
            raise ConflictError("Idempotency-Key was already used for a different message.")
        replayed.append(existing)
    return replayed


def _quota_error(*, workspace: Workspace, external_id: str, count: int) -> QuotaExceededError:
    held = Conversation.objects.filter(workspace=workspace, external_id=external_id).values_list(
        "message_count", flat=True
    ).first() or 0
    if count == 1 or held >= MAX_MESSAGES_PER_CONVERSATION:
        return QuotaExceededError(
            f"Conversation '{external_id}' already holds {held} messages, the maximum is {MAX_MESSAGES_PER_CONVERSATION}."
        )
    return QuotaExceededError(
        f"Conversation '{external_id}' holds {held} messages; {count} more would pass the maximum of "
        f"{MAX_MESSAGES_PER_CONVERSATION}. Nothing was appended."
    )


def _append_transaction(
    *, workspace: Workspace, external_id: str, branch_name: str, rows: Sequence[Message], tokens: int, now,
    user_id: str | None, source: str,
) -> tuple[int, BranchCounters]:
    """The append as a short transaction of a handful of statements (see the
    module docstring); creates the conversation (and a missing `main`)."""
    count = len(rows)
    with transaction.atomic():
        conversation_id = conversation_count_bump(
            workspace=workspace, external_id=external_id, count=count, now=now, user_id=user_id
        )
        if conversation_id is None:
            # Either new (the first append creates it) or full.
            conversation, created = _conversation_lock_or_create(
                workspace=workspace, external_id=external_id, user_id=user_id, metadata=None, source=source
            )
            if not created:
                _user_conflict(external_id=external_id, held=conversation.user_id, given=user_id)
            if not created and conversation.message_count + count > MAX_MESSAGES_PER_CONVERSATION:
                raise _quota_error(workspace=workspace, external_id=external_id, count=count)
            conversation_id = conversation_count_bump(
                workspace=workspace, external_id=external_id, count=count, now=now, user_id=user_id
            )
            if conversation_id is None:
                raise _quota_error(workspace=workspace, external_id=external_id, count=count)
        counters = branch_floors_take(conversation_id=conversation_id, name=branch_name, count=count, tokens=tokens)
        if counters is None and branch_name == MAIN_BRANCH:
            # A conversation made before branches existed; the row lock is held.
            Branch.objects.create(conversation_id=conversation_id, name=MAIN_BRANCH)
            counters = branch_floors_take(conversation_id=conversation_id, name=branch_name, count=count, tokens=tokens)
        if counters is None:
            raise NotFoundError(f"Branch '{branch_name}' not found in conversation '{external_id}'.")
        _number(rows, conversation_id=conversation_id, counters=counters)
        # The row lock makes the floors unique; only an idempotency key
        # committed meanwhile by another conversation's append can collide.
        insert_objects(rows)
        _announce(workspace=workspace, external_id=external_id, branch_name=branch_name, rows=rows, tokens=tokens,
                  conversation_id=conversation_id, counters=counters)
    return conversation_id, counters


def _number(rows: Sequence[Message], *, conversation_id: int, counters: BranchCounters) -> None:
    first_floor = counters.next_floor_no - len(rows)
    for index, row in enumerate(rows):
        row.conversation_id, row.branch_id, row.floor_no = conversation_id, counters.id, first_floor + index


def _announce(
    *, workspace: Workspace, external_id: str, branch_name: str, rows: Sequence[Message], tokens: int,
    conversation_id: int, counters: BranchCounters,
) -> None:
    first_floor = counters.next_floor_no - len(rows)
    send_on_commit(
        hooks.messages_appended,
        MessagesAppended(
            workspace_id=workspace.pk,
            conversation_id=conversation_id,
            external_id=external_id,
            branch=BranchRef(id=counters.id, name=branch_name),
            message_ids=tuple(row.pk for row in rows),
            first_floor_no=first_floor,
            last_floor_no=counters.next_floor_no - 1,
            tokens=tokens,
            pending_floors=max(counters.next_floor_no - 1 - counters.processed_floor_no, 0),
            pending_tokens=max(counters.appended_tokens - counters.processed_tokens, 0),
            opens_branch=first_floor == counters.fork_floor_no + 1,
            messages=tuple(rows),
        ),
    )


def _append(
    *,
    workspace: Workspace,
    external_id: str,
    messages: Sequence[NewMessage],
    user_id: str | None,
    branch_name: str,
    source: str,
) -> list[Message]:
    """The append; see the module docstring. Raises `_Replayed`."""
    tokens = sum(m.tokens for m in messages)
    now = timezone.now()
    rows = [
        Message(
            workspace=workspace,
            role=new.role,
            content=new.content,
            metadata=new.metadata,
            content_size_bytes=new.size,
            token_estimate=new.tokens,
            idempotency_key=new.idempotency_key,
            created_at=now,
        )
        for new in messages
    ]
    done = None
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        # PostgreSQL's one path (see the module's docstring). A retry's used
        # idempotency key fails this statement whole (the unique index), which
        # the caller turns into a replay: no look-up of the keys first.
        done = append_statement(workspace=workspace, external_id=external_id, branch_name=branch_name, rows=rows,
                                 tokens=tokens, now=now, user_id=user_id)
        if done is not None:
            conversation_id, counters = done
            _number(rows, conversation_id=conversation_id, counters=counters)
            _announce(workspace=workspace, external_id=external_id, branch_name=branch_name, rows=rows, tokens=tokens,
                      conversation_id=conversation_id, counters=counters)
    if done is None:
        # A retry is answered by one read, outside any transaction (before the
        # cap or a missing branch can refuse it); a key committed after this
        # read makes the INSERT fail, which the caller turns into a replay.
        replayed = _replays(workspace, external_id=external_id, branch_name=branch_name, messages=messages)
        if replayed is not None:
            raise _Replayed(replayed)
        _append_transaction(workspace=workspace, external_id=external_id, branch_name=branch_name, rows=rows,
                            tokens=tokens, now=now, user_id=user_id, source=source)
    for row in rows:
        row._state.adding, row._state.db = False, connection.alias
    return rows


def messages_append(
    *,
    workspace: Workspace,
    external_id: str,
    messages: Sequence[NewMessage],
    user_id: str | None = None,
    branch: str = MAIN_BRANCH,
    source: str = "api",
    max_messages: int = MAX_MESSAGES_PER_BATCH,
) -> BatchAppendResult:
    """Append messages to a branch in order, all or none, creating the
    conversation when it is new.

    `QuotaExceededError` when the conversation cannot take them all (nothing
    is appended), `NotFoundError` for a branch other than `main` that does not
    exist. Idempotency keys are per message and unique per workspace: when
    every message carries a key the workspace already used for that same
    message, the earlier messages are returned (`created=False`) and nothing
    is written; a batch with some keys used and some not is a `ConflictError`.
    `max_messages` is the API's batch size; a framework adapter whose protocol
    adds more at once (still one transaction) may raise it.
    """
    external_id = validate_conversation_id(external_id)
    user_id = validate_user_id(user_id)
    branch_name = validate_branch_name(branch)
    if not messages:
        raise ValidationError("messages: must hold at least one message.")
    if len(messages) > max_messages:
        raise ValidationError(f"messages: at most {max_messages} per request.")
    keys = [m.idempotency_key for m in messages if m.idempotency_key is not None]
    if len(set(keys)) != len(keys):
        raise ValidationError("messages: idempotency keys must differ within a batch.")
    try:
        rows = _append(
            workspace=workspace,
            external_id=external_id,
            messages=messages,
            user_id=user_id,
            branch_name=branch_name,
            source=source,
        )
    except _Replayed as replay:
        return BatchAppendResult(messages=replay.messages, branch_name=branch_name, created=False)
    except IntegrityError:
        if not keys:
            raise
        # Another conversation's append committed one of our keys first; our
        # transaction rolled back whole, so the earlier appends are the answer.
        replayed = _replays(workspace, external_id=external_id, branch_name=branch_name, messages=messages)
        if replayed is None:
            raise ConflictError("Idempotency-Key is being used by a concurrent request; retry.")
        return BatchAppendResult(messages=replayed, branch_name=branch_name, created=False)
    return BatchAppendResult(messages=rows, branch_name=branch_name, created=True)


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
    """Append one message (see `messages_append`).

    Raises `QuotaExceededError` at 10,000 messages, `NotFoundError` for a branch
    other than `main` that does not exist. With an `idempotency_key` (unique per
    workspace) a retry returns the first append (`created=False`) and writes
    nothing; the same key with a different message is a `ConflictError`.
    """
    new = new_message(role=role, content=content, metadata=metadata, idempotency_key=idempotency_key)
    result = messages_append(
        workspace=workspace, external_id=external_id, messages=[new], user_id=user_id, branch=branch, source=source
    )
    return AppendResult(message=result.messages[0], branch_name=result.branch_name, created=result.created)


def new_messages(raw: Sequence[Mapping[str, Any]], *, key_prefix: str | None = None) -> list[NewMessage]:
    """Validate a batch of `{"role", "content", "metadata"?, "idempotency_key"?}`.
    With `key_prefix` (a request's Idempotency-Key) a message without a key of
    its own gets `<key_prefix>:<index>`, so a retried batch replays whole."""
    out = []
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise ValidationError(f"messages[{index}]: must be an object.")
        key = item.get("idempotency_key")
        if key is None and key_prefix is not None:
            key = f"{key_prefix}:{index}"
        out.append(
            new_message(
                role=item.get("role"),
                content=item.get("content"),
                metadata=item.get("metadata"),
                idempotency_key=key,
                prefix=f"messages[{index}].",
            )
        )
    return out
