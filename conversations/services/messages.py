"""Writes to messages: append (one or a batch), edit, delete, clear.

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

Because every write that changes a conversation's messages first locks its
row (the UPDATE above, or `conversation_lock`), appends, deletes, clears and
forks of one conversation are serialized, and floor numbers are handed out in
commit order (which keeps keyset cursors from skipping a message). Work that
depends on the append (memory extraction) is announced after the commit
through `conversations.hooks`; no second transaction runs per append.
"""

# SQL here is built from model metadata (table and column names, quoted by the
# backend); every value is a bound parameter.
# ruff: noqa: S608
from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Max
from django.db.models.functions import Greatest
from django.utils import timezone

from accounts.models import Workspace
from conversations import hooks
from conversations.hooks import (
    BranchRef,
    MessageDeleted,
    MessageEdited,
    MessagesAppended,
    MessagesCleared,
    send_on_commit,
)
from conversations.models import MAIN_BRANCH, MAX_MESSAGES_PER_CONVERSATION, Branch, Conversation, Message
from conversations.services.conversations import _conversation_lock_or_create, conversation_lock
from conversations.services.validation import (
    UNSET,
    estimate_tokens,
    validate_branch_name,
    validate_content,
    validate_conversation_id,
    validate_idempotency_key,
    validate_metadata,
    validate_role,
    validate_user_id,
)
from memory_project.db import column, fetch_one, insert_objects, json_records, json_recordset, record_names, table
from memory_project.errors import ConflictError, NotFoundError, QuotaExceededError, ValidationError

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


@dataclass(frozen=True)
class _BranchCounters:
    id: str
    next_floor_no: int
    processed_floor_no: int
    appended_tokens: int
    processed_tokens: int
    fork_floor_no: int


def _same_message(existing: Message, *, external_id: str, branch_name: str, new: NewMessage) -> bool:
    return (
        existing.conversation.external_id == external_id
        and existing.branch.name == branch_name
        and existing.role == new.role
        # An edited message no longer shows what was sent; the key still names it.
        and (existing.updated_at is not None or (existing.content == new.content and existing.metadata == new.metadata))
    )


def _keys_used_statement(workspace: Workspace, keys: list[str]) -> tuple[str, list[Any]]:
    msg = table(Message)
    workspace_col, key_col = column(Message, "workspace"), column(Message, "idempotency_key")
    if connection.vendor == "postgresql":
        # A LATERAL subquery with its own LIMIT is run per key, never
        # flattened into a join the planner could drive from the workspace.
        sql = (
            f"SELECT 1 FROM unnest(%s::varchar[]) AS k (key), LATERAL (SELECT 1 FROM {msg} "
            f"WHERE {msg}.{workspace_col} = %s AND {msg}.{key_col} = k.key LIMIT 1) AS hit LIMIT 1"
        )
        return sql, [keys, workspace.pk]
    sql = f"SELECT 1 FROM {msg} WHERE {workspace_col} = %s AND {key_col} IN ({', '.join(['%s'] * len(keys))}) LIMIT 1"
    return sql, [workspace.pk, *keys]


def _keys_used(workspace: Workspace, keys: list[str]) -> bool:
    """Whether the workspace used any of `keys`: one index probe per key on
    the (workspace, key) unique index, the answer for nearly every keyed
    append (a retry is the exception). On PostgreSQL the keys are one array,
    each probed on the index: with `key IN (...)` a generic plan
    matched only the workspace on the index and filtered every keyed message
    of the workspace (25 ms at 50,000)."""
    sql, params = _keys_used_statement(workspace, keys)
    return fetch_one(sql, params) is not None


def _replays(
    workspace: Workspace, *, external_id: str, branch_name: str, messages: Sequence[NewMessage]
) -> list[Message] | None:
    """The earlier appends the batch's idempotency keys name: None when no key
    is known, all of them when every key is (a retry), 409 otherwise."""
    keys = [m.idempotency_key for m in messages if m.idempotency_key is not None]
    if not keys or not _keys_used(workspace, keys):
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


# A conversation's user is fixed once set: an append naming another user
# changes nothing here and is refused by the transaction path (409), so floors
# are always filed under the user who wrote them.
_SAME_USER = (
    f"({column(Conversation, 'user_id')} IS NULL OR CAST(%s AS TEXT) IS NULL "
    f"OR {column(Conversation, 'user_id')} = %s)"
)


def _user_conflict(*, external_id: str, held: str | None, given: str | None) -> None:
    if given is not None and held is not None and held != given:
        raise ConflictError(
            f"Conversation '{external_id}' belongs to user_id '{held}'; a conversation's user is fixed once set "
            f"(append without user_id, or with the same one)."
        )


def _bump_conversation(
    *, workspace: Workspace, external_id: str, count: int, now, user_id: str | None
) -> int | None:
    """Count `count` new messages on the conversation if the cap allows; its id,
    or None when it does not exist or is full. Locks the row."""
    conv = Conversation
    sql = (
        f"UPDATE {table(conv)} SET {column(conv, 'message_count')} = {column(conv, 'message_count')} + %s, "
        f"{column(conv, 'last_message_at')} = %s, "
        f"{column(conv, 'user_id')} = COALESCE(%s, {column(conv, 'user_id')}) "
        f"WHERE {column(conv, 'workspace')} = %s AND {column(conv, 'external_id')} = %s "
        f"AND {column(conv, 'message_count')} + %s <= %s AND {_SAME_USER} RETURNING {column(conv, 'id')}"
    )
    stamp = Conversation._meta.get_field("last_message_at").get_db_prep_save(now, connection)
    row = fetch_one(sql, [count, stamp, user_id, workspace.pk, external_id, count, MAX_MESSAGES_PER_CONVERSATION,
                          user_id, user_id])
    return row[0] if row else None


def _bump_branch(*, conversation_id: int, name: str, count: int, tokens: int) -> _BranchCounters | None:
    """Hand out `count` floor numbers on the branch; its counters after the append."""
    br = Branch
    returning = ", ".join(
        column(br, name)
        for name in ("id", "next_floor_no", "processed_floor_no", "appended_tokens", "processed_tokens", "fork_floor_no")
    )
    sql = (
        f"UPDATE {table(br)} SET {column(br, 'next_floor_no')} = {column(br, 'next_floor_no')} + %s, "
        f"{column(br, 'appended_tokens')} = {column(br, 'appended_tokens')} + %s "
        f"WHERE {column(br, 'conversation')} = %s AND {column(br, 'name')} = %s RETURNING {returning}"
    )
    row = fetch_one(sql, [count, tokens, conversation_id, name])
    if row is None:
        return None
    branch_id, next_floor_no, processed, appended, processed_tokens, fork = row
    return _BranchCounters(branch_id, next_floor_no, processed, appended, processed_tokens, fork or 0)


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


@functools.cache
def _append_statement_parts() -> tuple[str, list[Any]]:
    """The one-statement append's SQL (PostgreSQL's) and the message fields it
    takes as JSON records: written once per process from model metadata."""
    conv, br, msg = Conversation, Branch, Message
    fields = [f for f in msg._meta.concrete_fields if f.name not in ("workspace", "conversation", "branch", "floor_no")]
    # The rows travel as one JSON parameter, numbered by WITH ORDINALITY.
    names = ", ".join(record_names(fields))
    returning = ", ".join(
        f"{table(br)}.{column(br, name)}"
        for name in ("id", "conversation", "next_floor_no", "processed_floor_no", "appended_tokens", "processed_tokens",
                     "fork_floor_no")
    )
    sql = (
        f"WITH conv AS (UPDATE {table(conv)} SET {column(conv, 'message_count')} = {column(conv, 'message_count')} + %s, "
        f"{column(conv, 'last_message_at')} = %s, {column(conv, 'user_id')} = COALESCE(%s, {column(conv, 'user_id')}) "
        f"WHERE {column(conv, 'workspace')} = %s AND {column(conv, 'external_id')} = %s "
        f"AND {column(conv, 'message_count')} + %s <= %s AND {_SAME_USER} "
        f"AND EXISTS (SELECT 1 FROM {table(br)} WHERE {table(br)}.{column(br, 'conversation')} = "
        f"{table(conv)}.{column(conv, 'id')} AND {table(br)}.{column(br, 'name')} = %s) "
        f"RETURNING {table(conv)}.{column(conv, 'id')} AS id), "
        f"br AS (UPDATE {table(br)} SET {column(br, 'next_floor_no')} = {column(br, 'next_floor_no')} + %s, "
        f"{column(br, 'appended_tokens')} = {column(br, 'appended_tokens')} + %s FROM conv "
        f"WHERE {table(br)}.{column(br, 'conversation')} = conv.id AND {table(br)}.{column(br, 'name')} = %s "
        f"RETURNING {returning}), "
        f"ins AS (INSERT INTO {table(msg)} ({column(msg, 'workspace')}, {column(msg, 'conversation')}, "
        f"{column(msg, 'branch')}, {column(msg, 'floor_no')}, {', '.join(connection.ops.quote_name(f.column) for f in fields)}) "
        f"SELECT %s, br.{column(br, 'conversation')}, br.{column(br, 'id')}, br.{column(br, 'next_floor_no')} - %s - 1 + v_n, "
        f"{names} FROM br CROSS JOIN {json_recordset(fields, ordinality=True)}) "
        "SELECT * FROM br"
    )
    return sql, fields


def _append_statement(
    *, workspace: Workspace, external_id: str, branch_name: str, rows: Sequence[Message], tokens: int, now, user_id: str | None
) -> tuple[int, _BranchCounters] | None:
    """PostgreSQL, outside a transaction: the whole append as one statement,
    atomic by itself (data-modifying CTEs): the conversation's counters under
    its row lock and the cap (only if the branch exists), the branch's floor
    numbers and counters, and the INSERT of the rows numbered from them. The
    conversation pk and the branch counters, or None when nothing was written
    because the conversation is new or full, or the branch missing (the
    transaction path tells these apart)."""
    sql, fields = _append_statement_parts()
    count = len(rows)
    stamp = Conversation._meta.get_field("last_message_at").get_db_prep_save(now, connection)
    params: list[Any] = [
        count, stamp, user_id, workspace.pk, external_id, count, MAX_MESSAGES_PER_CONVERSATION,
        user_id, user_id, branch_name,  # conv
        count, tokens, branch_name,  # br
        workspace.pk, count,  # ins
    ]
    params.append(json_records(fields, ([getattr(row, f.attname) for f in fields] for row in rows)))
    row = fetch_one(sql, params)
    if row is None:
        return None
    branch_id, conversation_id, next_floor_no, processed, appended, processed_tokens, fork = row
    return conversation_id, _BranchCounters(branch_id, next_floor_no, processed, appended, processed_tokens, fork or 0)


def _append_transaction(
    *, workspace: Workspace, external_id: str, branch_name: str, rows: Sequence[Message], tokens: int, now,
    user_id: str | None, source: str,
) -> tuple[int, _BranchCounters]:
    """The append as a short transaction of a handful of statements (see the
    module docstring); creates the conversation (and a missing `main`)."""
    count = len(rows)
    with transaction.atomic():
        conversation_id = _bump_conversation(
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
            conversation_id = _bump_conversation(
                workspace=workspace, external_id=external_id, count=count, now=now, user_id=user_id
            )
            if conversation_id is None:
                raise _quota_error(workspace=workspace, external_id=external_id, count=count)
        counters = _bump_branch(conversation_id=conversation_id, name=branch_name, count=count, tokens=tokens)
        if counters is None and branch_name == MAIN_BRANCH:
            # A conversation made before branches existed; the row lock is held.
            Branch.objects.create(conversation_id=conversation_id, name=MAIN_BRANCH)
            counters = _bump_branch(conversation_id=conversation_id, name=branch_name, count=count, tokens=tokens)
        if counters is None:
            raise NotFoundError(f"Branch '{branch_name}' not found in conversation '{external_id}'.")
        _number(rows, conversation_id=conversation_id, counters=counters)
        # The row lock makes the floors unique; only an idempotency key
        # committed meanwhile by another conversation's append can collide.
        insert_objects(rows)
        _announce(workspace=workspace, external_id=external_id, branch_name=branch_name, rows=rows, tokens=tokens,
                  conversation_id=conversation_id, counters=counters)
    return conversation_id, counters


def _number(rows: Sequence[Message], *, conversation_id: int, counters: _BranchCounters) -> None:
    first_floor = counters.next_floor_no - len(rows)
    for index, row in enumerate(rows):
        row.conversation_id, row.branch_id, row.floor_no = conversation_id, counters.id, first_floor + index


def _announce(
    *, workspace: Workspace, external_id: str, branch_name: str, rows: Sequence[Message], tokens: int,
    conversation_id: int, counters: _BranchCounters,
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
        # One round trip instead of five (BEGIN, three statements, COMMIT).
        # Inside a caller's transaction the savepoint path below keeps a
        # failed INSERT from aborting the caller's work. A retry's used
        # idempotency key fails this statement whole (the unique index), which
        # the caller turns into a replay: no look-up of the keys first.
        done = _append_statement(workspace=workspace, external_id=external_id, branch_name=branch_name, rows=rows,
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


# --- Edits and deletions ----------------------------------------------------------


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
            MessageEdited(
                workspace_id=workspace.pk,
                conversation_id=conversation.pk,
                external_id=external_id,
                branch=BranchRef(id=message.branch_id, name=message.branch.name),
                message_id=message.pk,
                floor_no=message.floor_no,
                content_changed=size is not None,
            ),
        )
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
            MessageDeleted(
                workspace_id=workspace.pk,
                conversation_id=conversation.pk,
                external_id=external_id,
                branch=BranchRef(id=message.branch_id, name=message.branch.name),
                message_id=message.pk,
                floor_no=message.floor_no,
            ),
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
