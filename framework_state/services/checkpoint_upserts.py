"""How checked checkpoints and writes are stored: upserts built from model
metadata (table and column names, quoted by the backend; every value a bound
parameter), one statement per batch on PostgreSQL.
"""

# SQL here is built from model metadata (table and column names, quoted by the
# backend); every value is a bound parameter.
# ruff: noqa: S608
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from django.db import connection, models, transaction

from accounts.models import Workspace
from conversations.models import Branch, Conversation, FrameworkSource
from conversations.services import (
    conversation_get_or_create,
    new_conversation,
)
from framework_state.models import Checkpoint, CheckpointWrite
from memory_project.db import (
    cast_type,
    column,
    fetch_one,
    insert_objects,
    json_records,
    json_recordset,
    on_conflict_sql,
    placeholders,
    record_names,
    table,
)


def thread_get_or_create(*, workspace: Workspace, thread_id: str) -> Conversation:
    conversation, _ = conversation_get_or_create(
        workspace=workspace, external_id=thread_id, source=FrameworkSource.LANGGRAPH
    )
    return conversation


@dataclass
class CheckedPut:
    thread_id: str
    row: Checkpoint


@dataclass
class CheckedWrites:
    thread_id: str
    rows: list[CheckpointWrite]
    sent: int  # writes in the request, repeats of an index included


def checkpoints_store(workspace: Workspace, puts: list[CheckedPut], writes: list[CheckedWrites]) -> None:
    """Store checked puts and writes, all or none. On PostgreSQL one
    statement (its own transaction) stores the whole batch, creating the
    threads that do not exist yet; on both databases one plain upsert stores
    a lone put (on SQLite also a task's writes) once its thread exists.
    Otherwise (a batch or a new thread on SQLite, a thread created by another
    request at the same moment) one transaction creates the missing threads
    and stores everything."""
    writes = [task for task in writes if task.rows]  # no rows: nothing to store, no thread to make
    threads = sorted({p.thread_id for p in puts} | {w.thread_id for w in writes})
    if not threads:
        return
    lone = len(puts) + len(writes) == 1
    if connection.vendor == "postgresql":
        # A put without a parent is a thread's first checkpoint: its thread is
        # most likely new, so the first statement creates what is missing.
        # A lone put (each put of a run's tail: LangGraph sends a put only
        # once the one before is stored) takes the plain upsert, which
        # PostgreSQL runs at ~3/4 of the batch statement's cost. A put always
        # writes its row, so a row not written means a thread not found;
        # writes stay with the batch statement, which tells a replayed
        # regular write from a missing thread.
        create = any(put.row.parent_checkpoint_id is None for put in puts)
        stored = not create and (
            _upsert_in_thread([puts[0].row], thread_id=threads[0]) if lone and puts
            else _upsert_all(workspace, threads, puts, writes, create=False)
        )
        stored = stored or _upsert_creating(workspace, threads, puts, writes)
    else:
        stored = lone and _upsert_in_thread([puts[0].row] if puts else writes[0].rows, thread_id=threads[0])
    if stored:
        return
    with transaction.atomic():
        found = dict(threads_of(workspace=workspace, thread_ids=threads).values_list("external_id", "pk"))
        for thread_id in threads:
            if thread_id not in found:
                found[thread_id] = thread_get_or_create(workspace=workspace, thread_id=thread_id).pk
        kept = _last_put_of_each_key(puts)
        for put in kept:
            put.row.conversation_id = found[put.thread_id]
        insert_objects([put.row for put in kept], **_UPSERT[Checkpoint])
        keyed = _first_regular_last_special(writes)
        for (thread_id, *_), row in keyed.items():
            row.conversation_id = found[thread_id]
        insert_objects(list(keyed.values()), **_UPSERT[CheckpointWrite])


def _upsert_creating(workspace: Workspace, threads: list[str], puts: list[CheckedPut], writes: list[CheckedWrites]) -> bool:
    """The batch in the statement that creates missing threads. A thread
    another request creates at the same moment makes it store nothing; with
    more than one thread named, the ones it did create are then undone too
    (it runs in a transaction), so a batch stays all or none. One thread
    needs no transaction: had it been created elsewhere, this created nothing."""
    if len(threads) == 1:
        return _upsert_all(workspace, threads, puts, writes, create=True)
    with transaction.atomic():
        stored = _upsert_all(workspace, threads, puts, writes, create=True)
        if not stored:
            transaction.set_rollback(True)
    return stored


def _last_put_of_each_key(puts: list[CheckedPut]) -> list[CheckedPut]:
    # Puts of the same checkpoint in one batch: the last one stands, as if
    # each had been its own request (one upsert may not touch a row twice).
    return list({(p.thread_id, p.row.checkpoint_ns, p.row.checkpoint_id): p for p in puts}.values())


def _first_regular_last_special(writes: list[CheckedWrites]) -> dict[tuple[Any, ...], CheckpointWrite]:
    """The batch's writes by key (thread first): across its tasks, as within
    one, the first regular write of a key stands and the last special one
    wins (one upsert may not touch a row twice)."""
    keyed: dict[tuple[Any, ...], CheckpointWrite] = {}
    for task in writes:
        for row in task.rows:
            key = (task.thread_id, row.checkpoint_ns, row.checkpoint_id, row.task_id, row.idx)
            if row.idx < 0 or key not in keyed:
                keyed[key] = row
    return keyed


# How each table is upserted: a repeated put of a checkpoint id overwrites it
# (LangGraph's savers upsert); a special write (negative idx: an error, an
# interrupt) overwrites the stored one, a regular write already stored is kept.
_UPSERT: dict[type[models.Model], dict[str, Any]] = {
    Checkpoint: {
        "on_conflict": ("conversation", "checkpoint_ns", "checkpoint_id"),
        "update": ("workspace", "parent_checkpoint_id", "type", "checkpoint", "metadata", "run_id"),
    },
    CheckpointWrite: {
        "on_conflict": ("conversation", "checkpoint_ns", "checkpoint_id", "task_id", "idx"),
        "update": ("task_path", "channel", "type", "value"),
        "update_where": f"excluded.{CheckpointWrite._meta.get_field('idx').column} < 0",
    },
}


def _conflict_sql(model: type[models.Model]) -> str:
    spec = _UPSERT[model]
    return on_conflict_sql(model, spec["on_conflict"], update=spec["update"], update_where=spec.get("update_where", ""))


@functools.cache
def _saved_fields(model: type[models.Model]) -> tuple[models.Field, ...]:
    """The columns a put or write sets (the thread's conversation is looked up by the statement)."""
    return tuple(f for f in model._meta.concrete_fields if not f.primary_key and f.name != "conversation")


def _thread_field() -> models.Field:
    # Each JSON row names its thread in a column of the thread id's type.
    return Conversation._meta.get_field("external_id")


@functools.cache
def _upsert_all_sql(*, create: bool) -> str:
    """PostgreSQL: the puts' and writes' upserts in one statement, their rows
    in two JSON parameters, each row's thread found by id. Nothing is written
    unless every thread named exists, so the statement stores all or none.

    Without `create`, a missing thread leaves everything unwritten (the caller
    tries again with `create`). With it, the statement first creates the
    missing threads' conversations, each with its `main` branch, from rows
    given as two more JSON parameters (`_new_thread_rows`). A thread another
    request creates at the same moment is not seen by this statement, which
    then writes no checkpoint or write, but keeps the threads it created
    (`_upsert_creating` undoes them)."""
    qn = connection.ops.quote_name
    conv, thread = Conversation, _thread_field()
    thread_name = record_names([thread])[0]
    # One index lookup per thread named (the unique (workspace, external id)
    # index), whatever the plan's estimate of the workspace's size: a generic
    # plan of `external_id = ANY(...)` may scan the whole workspace instead.
    lookup = (
        f"CROSS JOIN LATERAL (SELECT c.{column(conv, 'id')} AS id, c.{column(conv, 'external_id')} AS external_id "
        f"FROM {table(conv)} c WHERE c.{column(conv, 'workspace')} = {{workspace}} "
        f"AND c.{column(conv, 'external_id')} = {{external_id}} LIMIT 1) c"
    )
    if create:
        conv_fields, branch_fields = _new_thread_fields()
        conv_names = record_names(conv_fields)
        ws_name, id_name = record_names([conv._meta.get_field("workspace"), thread])
        head = (
            f"WITH wanted AS (SELECT * FROM {json_recordset(conv_fields, 'n')}), "
            f"found AS (SELECT c.id, c.external_id FROM wanted n "
            f"{lookup.format(workspace=f'n.{ws_name}', external_id=f'n.{id_name}')}), "
            f"created AS (INSERT INTO {table(conv)} ({', '.join(qn(f.column) for f in conv_fields)}) "
            f"SELECT {', '.join(f'n.{name}' for name in conv_names)} FROM wanted n "
            f"WHERE NOT EXISTS (SELECT 1 FROM found f WHERE f.external_id = n.{id_name}) "
            f"{on_conflict_sql(conv, ('workspace', 'external_id'))} "
            f"RETURNING {column(conv, 'id')} AS id, {column(conv, 'external_id')} AS external_id), "
            f"branches AS (INSERT INTO {table(Branch)} ({', '.join(qn(f.column) for f in branch_fields)}, "
            f"{column(Branch, 'conversation')}) "
            f"SELECT {', '.join(f'b.{name}' for name in record_names(branch_fields))}, c.id "
            f"FROM {json_recordset([*branch_fields, thread], 'b')} JOIN created c ON c.external_id = b.{thread_name} "
            "RETURNING 1), "
            "threads AS (SELECT id, external_id FROM found UNION ALL SELECT id, external_id FROM created), "
        )
    else:
        head = (
            "WITH threads AS (SELECT c.id, c.external_id FROM unnest(%s::varchar[]) AS wanted (external_id) "
            f"{lookup.format(workspace='%s', external_id='wanted.external_id')}), "
        )

    def upsert(model: type[models.Model], alias: str) -> str:
        fields = _saved_fields(model)
        names = ", ".join(f"{alias}.{name}" for name in record_names(fields))
        return (
            f"INSERT INTO {table(model)} ({', '.join(qn(f.column) for f in fields)}, {column(model, 'conversation')}) "
            f"SELECT {names}, t.id FROM {json_recordset([*fields, thread], alias)} "
            f"JOIN threads t ON t.external_id = {alias}.{thread_name} "
            f"WHERE (SELECT count(*) FROM threads) = %s {_conflict_sql(model)} RETURNING 1"
        )

    return (
        f"{head}puts AS ({upsert(Checkpoint, 'p')}), "
        f"writes AS ({upsert(CheckpointWrite, 'w')}) "
        "SELECT (SELECT count(*) FROM threads), (SELECT count(*) FROM puts), (SELECT count(*) FROM writes)"
    )


def _new_thread_fields() -> tuple[list[models.Field], list[models.Field]]:
    """The columns a new thread's conversation and `main` branch are created
    with: every one but the conversation's key (and the branch's conversation,
    known once created)."""
    conv_fields = [f for f in Conversation._meta.concrete_fields if not f.primary_key]
    branch_fields = [f for f in Branch._meta.concrete_fields if f.name != "conversation"]
    return conv_fields, branch_fields


def _new_thread_rows(workspace: Workspace, threads: list[str]) -> list[str]:
    """`_upsert_all_sql(create=True)`'s first two parameters: a conversation
    and a `main` branch for each thread, as `new_conversation` makes them (the
    statement inserts those of the threads that do not exist)."""
    conv_fields, branch_fields = _new_thread_fields()
    conversations, branches = [], []
    for thread_id in threads:
        conversation, branch = new_conversation(workspace=workspace, external_id=thread_id, source=FrameworkSource.LANGGRAPH)
        conversations.append([getattr(conversation, f.attname) for f in conv_fields])
        branches.append([*(getattr(branch, f.attname) for f in branch_fields), thread_id])
    return [json_records(conv_fields, conversations), json_records([*branch_fields, _thread_field()], branches)]


def _upsert_all(
    workspace: Workspace, threads: list[str], puts: list[CheckedPut], writes: list[CheckedWrites], *, create: bool
) -> bool:
    """The batch in one statement (creating missing threads with `create`);
    False (nothing written) when a thread does not exist (or, with `create`,
    was created by another request meanwhile)."""
    put_fields, write_fields, thread = _saved_fields(Checkpoint), _saved_fields(CheckpointWrite), _thread_field()
    put_rows = ([getattr(p.row, f.attname) for f in put_fields] + [p.thread_id] for p in _last_put_of_each_key(puts))
    write_rows = (
        [getattr(row, f.attname) for f in write_fields] + [key[0]] for key, row in _first_regular_last_special(writes).items()
    )
    params = [
        *(_new_thread_rows(workspace, threads) if create else [threads, workspace.pk]),
        json_records([*put_fields, thread], put_rows),
        len(threads),
        json_records([*write_fields, thread], write_rows),
        len(threads),
    ]
    found = fetch_one(_upsert_all_sql(create=create), params)
    return found is not None and found[0] == len(threads)


def _upsert_in_thread(rows: list[Checkpoint] | list[CheckpointWrite], *, thread_id: str) -> bool:
    """Rows of one table upserted in one statement, the thread's conversation
    found by its id in the same statement (`INSERT ... SELECT ... FROM
    conversation CROSS JOIN (VALUES ...)`). True when every row was written;
    False when some were not: the conversation did not exist yet (LangGraph
    sends a step's writes beside the put that creates the thread), or a
    replayed regular write was kept. The caller then writes them, creating
    the thread if needed; repeating the upsert is harmless."""
    model = type(rows[0])
    fields = _saved_fields(model)
    params: list[Any] = []
    for row in rows:
        params.extend(f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields)
    params += [rows[0].workspace_id, thread_id]
    vendor = connection.vendor
    with connection.cursor() as cursor:
        cursor.execute(_upsert_in_thread_sql(model, len(rows), vendor), params)
        # Asking afterwards whether the conversation exists would race with
        # the put that creates it: only the rows returned are known written.
        return len(cursor.fetchall()) == len(rows)


# A few texts: one per number of rows, and a lone put has one (a task's
# writes, a handful); a rare long one is written again rather than kept.
@functools.lru_cache(maxsize=16)
def _upsert_in_thread_sql(model: type[models.Model], count: int, vendor: str) -> str:
    """`_upsert_in_thread`'s statement for `count` rows."""
    conv, fields, qn = Conversation, _saved_fields(model), connection.ops.quote_name
    # PostgreSQL types a VALUES column by its first row: each value says its own.
    row_sql = (f"({', '.join(f'%s::{cast_type(f)}' for f in fields)})" if vendor == "postgresql"
               else f"({placeholders(len(fields))})")
    # A VALUES list's columns are column1, column2 ... on both databases.
    names = ", ".join(f"v.column{n}" for n in range(1, len(fields) + 1))
    return (
        f"INSERT INTO {table(model)} ({', '.join(qn(f.column) for f in fields)}, {column(model, 'conversation')}) "
        f"SELECT {names}, c.{column(conv, 'id')} FROM {table(conv)} c CROSS JOIN (VALUES "
        f"{', '.join([row_sql] * count)}) AS v "
        f"WHERE c.{column(conv, 'workspace')} = %s AND c.{column(conv, 'external_id')} = %s "
        # `WHERE true` lets SQLite tell the upsert's ON from a join's.
        f"AND true {_conflict_sql(model)} RETURNING 1"
    )


def threads_of(*, workspace: Workspace, thread_ids: list[str]):
    return Conversation.objects.filter(workspace=workspace, external_id__in=thread_ids)
