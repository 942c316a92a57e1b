"""The SQL of an append, built from model metadata (table and column names,
quoted by the backend); every value is a bound parameter. See
`conversations.services.append` for the statements' order and locks."""

# ruff: noqa: S608
from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection

from accounts.models import Workspace
from conversations.models import MAX_MESSAGES_PER_CONVERSATION, Branch, Conversation, Message
from memory_project.db import column, fetch_one, json_records, json_recordset, record_names, table

# A conversation's user is fixed once set: an append naming another user
# changes nothing here and is refused by the transaction path (409), so floors
# are always filed under the user who wrote them.
_SAME_USER = (
    f"({column(Conversation, 'user_id')} IS NULL OR CAST(%s AS TEXT) IS NULL "
    f"OR {column(Conversation, 'user_id')} = %s)"
)


@dataclass(frozen=True)
class BranchCounters:
    id: str
    next_floor_no: int
    processed_floor_no: int
    appended_tokens: int
    processed_tokens: int
    fork_floor_no: int


def keys_used_statement(workspace: Workspace, keys: list[str]) -> tuple[str, list[Any]]:
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


def keys_used(workspace: Workspace, keys: list[str]) -> bool:
    """Whether the workspace used any of `keys`: one index probe per key on
    the (workspace, key) unique index, the answer for nearly every keyed
    append (a retry is the exception). On PostgreSQL the keys are one array,
    each probed on the index: with `key IN (...)` a generic plan
    matched only the workspace on the index and filtered every keyed message
    of the workspace (25 ms at 50,000)."""
    sql, params = keys_used_statement(workspace, keys)
    return fetch_one(sql, params) is not None


def conversation_count_bump(
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


def branch_floors_take(*, conversation_id: int, name: str, count: int, tokens: int) -> BranchCounters | None:
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
    return BranchCounters(branch_id, next_floor_no, processed, appended, processed_tokens, fork or 0)


@functools.cache
def append_statement_parts() -> tuple[str, list[Any]]:
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


def append_statement(
    *, workspace: Workspace, external_id: str, branch_name: str, rows: Sequence[Message], tokens: int, now, user_id: str | None
) -> tuple[int, BranchCounters] | None:
    """PostgreSQL, outside a transaction: the whole append as one statement,
    atomic by itself (data-modifying CTEs): the conversation's counters under
    its row lock and the cap (only if the branch exists), the branch's floor
    numbers and counters, and the INSERT of the rows numbered from them. The
    conversation pk and the branch counters, or None when nothing was written
    because the conversation is new or full, or the branch missing (the
    transaction path tells these apart)."""
    sql, fields = append_statement_parts()
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
    return conversation_id, BranchCounters(branch_id, next_floor_no, processed, appended, processed_tokens, fork or 0)
