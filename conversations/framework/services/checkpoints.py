"""LangGraph checkpoints: a thread is a conversation; checkpoints and pending
writes are stored as the saver serialized them (type string + raw bytes).

Semantics follow LangGraph's own savers: `put` upserts by
(thread, namespace, checkpoint id) with the config's checkpoint id as parent;
regular writes (idx >= 0) are insert-or-ignore, special ones (idx < 0:
error, interrupt, resume ...) overwrite.
"""

# SQL here is built from model metadata (table and column names, quoted by the
# backend); every value is a bound parameter.
# ruff: noqa: S608
from __future__ import annotations

import base64
import binascii
import functools
from dataclasses import dataclass
from typing import Any

from django.db import connection, models, transaction
from django.utils import timezone

from accounts.models import Workspace
from conversations.framework.services.common import clean_list, clean_text, contains_nul
from conversations.models import Branch, Checkpoint, CheckpointWrite, Conversation, FrameworkSource
from conversations.services import (
    conversation_delete,
    conversation_get_or_create,
    new_conversation,
    validate_conversation_id,
)
from memory_project.db import (
    cast_type,
    column,
    fetch_one,
    insert_objects,
    json_records,
    json_recordset,
    new_object,
    on_conflict_sql,
    placeholders,
    record_names,
    table,
)
from memory_project.errors import ValidationError

MAX_NS_BYTES = 512
MAX_ID_BYTES = 64
MAX_WRITES_PER_REQUEST = 5000
MAX_IDS_PER_REQUEST = 1000
PRUNE_STRATEGIES = ("keep_latest", "delete")


def decode_blob(value: Any, *, field: str) -> bytes:
    if not isinstance(value, str):
        raise ValidationError(f"{field}: must be base64 text.")
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValidationError(f"{field}: must be base64 text.")


def clean_thread_id(value: Any, *, field: str = "thread_id") -> str:
    return validate_conversation_id(value, field=field)


def clean_ns(value: Any) -> str:
    return clean_text("" if value is None else value, field="checkpoint_ns", max_bytes=MAX_NS_BYTES, allow_empty=True)


def _thread(*, workspace: Workspace, thread_id: str) -> Conversation:
    conversation, _ = conversation_get_or_create(
        workspace=workspace, external_id=thread_id, source=FrameworkSource.LANGGRAPH
    )
    return conversation


@dataclass
class _Put:
    thread_id: str
    row: Checkpoint


@dataclass
class _Writes:
    thread_id: str
    rows: list[CheckpointWrite]
    sent: int  # writes in the request, repeats of an index included


def _clean_put(
    *, workspace: Workspace, thread_id: Any, checkpoint_ns: Any, checkpoint_id: Any, parent_checkpoint_id: Any,
    type: Any, checkpoint: Any, metadata: Any,
) -> _Put:
    thread_id = clean_thread_id(thread_id)
    checkpoint_ns = clean_ns(checkpoint_ns)
    checkpoint_id = clean_text(checkpoint_id, field="checkpoint_id", max_bytes=MAX_ID_BYTES)
    if parent_checkpoint_id is not None:
        parent_checkpoint_id = clean_text(parent_checkpoint_id, field="parent_checkpoint_id", max_bytes=MAX_ID_BYTES)
    type_ = clean_text(type, field="type", max_bytes=64)
    data = decode_blob(checkpoint, field="checkpoint")
    if not isinstance(metadata, dict):
        raise ValidationError("metadata: must be an object.")
    if contains_nul(metadata):
        raise ValidationError("metadata: must not contain NUL characters.")
    run_id = metadata.get("run_id")
    run_id = str(run_id)[:128] if run_id is not None else None
    row = new_object(
        Checkpoint,
        workspace_id=workspace.pk,
        checkpoint_ns=checkpoint_ns,
        checkpoint_id=checkpoint_id,
        parent_checkpoint_id=parent_checkpoint_id,
        type=type_,
        checkpoint=data,
        metadata=metadata,
        run_id=run_id,
        created_at=timezone.now(),
    )
    return _Put(thread_id, row)


def _clean_writes(
    *, workspace: Workspace, thread_id: Any, checkpoint_ns: Any, checkpoint_id: Any, task_id: Any, task_path: Any,
    writes: Any,
) -> _Writes:
    thread_id = clean_thread_id(thread_id)
    checkpoint_ns = clean_ns(checkpoint_ns)
    checkpoint_id = clean_text(checkpoint_id, field="checkpoint_id", max_bytes=MAX_ID_BYTES)
    task_id = clean_text(task_id, field="task_id", max_bytes=128)
    task_path = clean_text("" if task_path is None else task_path, field="task_path", max_bytes=1024, allow_empty=True)
    by_idx: dict[int, dict[str, Any]] = {}
    cleaned = clean_list(writes, field="writes", max_items=MAX_WRITES_PER_REQUEST)
    for index, write in enumerate(cleaned):
        if not isinstance(write, dict):
            raise ValidationError(f"writes[{index}]: must be an object.")
        idx = write.get("idx")
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise ValidationError(f"writes[{index}].idx: must be an integer.")
        if not -(2**31) <= idx < 2**31:
            raise ValidationError(f"writes[{index}].idx: out of range.")
        row = {
            "idx": idx,
            "channel": clean_text(write.get("channel"), field=f"writes[{index}].channel", max_bytes=256),
            "type": clean_text(write.get("type"), field=f"writes[{index}].type", max_bytes=64),
            "value": decode_blob(write.get("value"), field=f"writes[{index}].value"),
        }
        # Within one request as across requests: the first regular write of an
        # index stands, the last special one wins.
        if idx < 0 or idx not in by_idx:
            by_idx[idx] = row
    rows = [
        new_object(CheckpointWrite, workspace_id=workspace.pk, checkpoint_ns=checkpoint_ns, checkpoint_id=checkpoint_id,
                   task_id=task_id, task_path=task_path, **row)
        for row in by_idx.values()
    ]
    return _Writes(thread_id, rows, len(cleaned))


def checkpoint_put(
    *,
    workspace: Workspace,
    thread_id: Any,
    checkpoint_ns: Any,
    checkpoint_id: Any,
    parent_checkpoint_id: Any,
    type: Any,
    checkpoint: Any,
    metadata: Any,
) -> Checkpoint:
    """Store a checkpoint, replacing one stored under the same (thread,
    namespace, id): one statement (`_store`), on PostgreSQL also for a
    thread's first checkpoint, which creates the thread."""
    put = _clean_put(
        workspace=workspace, thread_id=thread_id, checkpoint_ns=checkpoint_ns, checkpoint_id=checkpoint_id,
        parent_checkpoint_id=parent_checkpoint_id, type=type, checkpoint=checkpoint, metadata=metadata,
    )
    _store(workspace, [put], [])
    return put.row


def checkpoint_writes_put(
    *,
    workspace: Workspace,
    thread_id: Any,
    checkpoint_ns: Any,
    checkpoint_id: Any,
    task_id: Any,
    task_path: Any,
    writes: Any,
) -> int:
    """Store a task's writes; `writes` is `[{"idx", "channel", "type", "value"}]`.
    A regular write (idx >= 0) already stored is kept (a replay), a special
    one (idx < 0) is overwritten."""
    task = _clean_writes(
        workspace=workspace, thread_id=thread_id, checkpoint_ns=checkpoint_ns, checkpoint_id=checkpoint_id,
        task_id=task_id, task_path=task_path, writes=writes,
    )
    _store(workspace, [], [task])
    return task.sent


MAX_OPS_PER_BATCH = 100
BATCH_OPS = ("put", "put_writes")
_PUT_FIELDS = ("thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata")
_WRITES_FIELDS = ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "task_path", "writes")


def checkpoint_batch(*, workspace: Workspace, ops: Any) -> list[dict[str, Any]]:
    """Puts and task writes stored together, as if applied in order: all, or
    (one op refused) none. A saver sends in one request what its threads ask
    for at once (a step's writes beside the checkpoint put before them), so
    a graph run costs a round trip per step, not one per call.

    Each op is a put's or a writes' body with `"op": "put"` or
    `"op": "put_writes"`; the answer holds, per op, what its own endpoint
    answers."""
    ops = clean_list(ops, field="ops", max_items=MAX_OPS_PER_BATCH)
    puts: list[_Put] = []
    writes: list[_Writes] = []
    results: list[dict[str, Any]] = []
    sent = 0
    for index, op in enumerate(ops):
        try:
            if not isinstance(op, dict):
                raise ValidationError("must be an object.")
            kind = op.get("op")
            if kind == "put":
                put = _clean_put(workspace=workspace, **_op_body(op, _PUT_FIELDS))
                puts.append(put)
                results.append(
                    {"thread_id": put.thread_id, "checkpoint_ns": put.row.checkpoint_ns, "checkpoint_id": put.row.checkpoint_id}
                )
            elif kind == "put_writes":
                task = _clean_writes(workspace=workspace, **_op_body(op, _WRITES_FIELDS))
                # One writes request's bound holds over the whole batch.
                sent += task.sent
                if sent > MAX_WRITES_PER_REQUEST:
                    raise ValidationError(f"writes: at most {MAX_WRITES_PER_REQUEST} per request, over all ops.")
                writes.append(task)
                results.append({"written": task.sent})
            else:
                raise ValidationError(f"op: must be one of {', '.join(BATCH_OPS)}.")
        except ValidationError as exc:
            raise ValidationError(f"ops[{index}]: {exc.message}", details={"op_index": index}) from None
    _store(workspace, puts, writes)
    return results


def _op_body(op: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    body = {name: op.get(name) for name in names}
    if "metadata" in names and "metadata" not in op:
        body["metadata"] = {}  # as the put endpoint: absent metadata is empty
    return body


def _store(workspace: Workspace, puts: list[_Put], writes: list[_Writes]) -> None:
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
        found = dict(_threads(workspace=workspace, thread_ids=threads).values_list("external_id", "pk"))
        for thread_id in threads:
            if thread_id not in found:
                found[thread_id] = _thread(workspace=workspace, thread_id=thread_id).pk
        kept = _last_put_of_each_key(puts)
        for put in kept:
            put.row.conversation_id = found[put.thread_id]
        insert_objects([put.row for put in kept], **_UPSERT[Checkpoint])
        keyed = _first_regular_last_special(writes)
        for (thread_id, *_), row in keyed.items():
            row.conversation_id = found[thread_id]
        insert_objects(list(keyed.values()), **_UPSERT[CheckpointWrite])


def _upsert_creating(workspace: Workspace, threads: list[str], puts: list[_Put], writes: list[_Writes]) -> bool:
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


def _last_put_of_each_key(puts: list[_Put]) -> list[_Put]:
    # Puts of the same checkpoint in one batch: the last one stands, as if
    # each had been its own request (one upsert may not touch a row twice).
    return list({(p.thread_id, p.row.checkpoint_ns, p.row.checkpoint_id): p for p in puts}.values())


def _first_regular_last_special(writes: list[_Writes]) -> dict[tuple[Any, ...], CheckpointWrite]:
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
    workspace: Workspace, threads: list[str], puts: list[_Put], writes: list[_Writes], *, create: bool
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


def _threads(*, workspace: Workspace, thread_ids: list[str]):
    return Conversation.objects.filter(workspace=workspace, external_id__in=thread_ids)


def _clean_ids(values: Any, *, field: str) -> list[str]:
    values = clean_list(values, field=field, max_items=MAX_IDS_PER_REQUEST)
    return [clean_text(value, field=f"{field}[{index}]", max_bytes=256) for index, value in enumerate(values)]


def thread_delete(*, workspace: Workspace, thread_id: Any) -> None:
    """Delete every checkpoint and write of the thread, in every namespace. A
    conversation that exists only for the thread goes with it; one that also
    holds messages keeps them."""
    thread_id = clean_text(thread_id, field="thread_id", max_bytes=256)
    with transaction.atomic():
        conversation = Conversation.objects.select_for_update().filter(workspace=workspace, external_id=thread_id).first()
        if conversation is None:
            return
        CheckpointWrite.objects.filter(conversation=conversation).delete()
        Checkpoint.objects.filter(conversation=conversation).delete()
        if conversation.source == FrameworkSource.LANGGRAPH and conversation.message_count == 0:
            conversation_delete(workspace=workspace, external_id=thread_id)


def checkpoints_delete_for_runs(*, workspace: Workspace, run_ids: Any) -> int:
    """Delete the checkpoints whose metadata names one of these runs, with their writes."""
    run_ids = _clean_ids(run_ids, field="run_ids")
    if not run_ids:
        return 0
    with transaction.atomic():
        doomed = list(
            Checkpoint.objects.filter(workspace=workspace, run_id__in=run_ids).values_list(
                "id", "conversation_id", "checkpoint_ns", "checkpoint_id"
            )
        )
        for _, conversation_id, ns, checkpoint_id in doomed:
            CheckpointWrite.objects.filter(
                conversation_id=conversation_id, checkpoint_ns=ns, checkpoint_id=checkpoint_id
            ).delete()
        Checkpoint.objects.filter(pk__in=[row[0] for row in doomed]).delete()
    return len(doomed)


def thread_copy(*, workspace: Workspace, source_thread_id: Any, target_thread_id: Any) -> int:
    """Copy every checkpoint and write of a thread (all namespaces, metadata and
    order kept) into another thread. A missing source copies nothing."""
    source_thread_id = clean_text(source_thread_id, field="source_thread_id", max_bytes=256)
    target_thread_id = clean_thread_id(target_thread_id, field="target_thread_id")
    with transaction.atomic():
        source = Conversation.objects.filter(workspace=workspace, external_id=source_thread_id).first()
        if source is None:
            return 0
        target = _thread(workspace=workspace, thread_id=target_thread_id)
        checkpoints = list(Checkpoint.objects.filter(conversation=source).order_by("id"))
        Checkpoint.objects.bulk_create(_copies(checkpoints, conversation_id=target.pk), ignore_conflicts=True)
        writes = CheckpointWrite.objects.filter(conversation=source).order_by("id")
        CheckpointWrite.objects.bulk_create(_copies(writes, conversation_id=target.pk), ignore_conflicts=True)
    return len(checkpoints)


def threads_prune(*, workspace: Workspace, thread_ids: Any, strategy: Any = "keep_latest") -> int:
    """`keep_latest`: keep only the newest checkpoint of each namespace (and its
    writes); `delete`: remove everything of the threads. Returns checkpoints removed."""
    thread_ids = _clean_ids(thread_ids, field="thread_ids")
    if strategy not in PRUNE_STRATEGIES:
        raise ValidationError(f"strategy: must be one of {', '.join(PRUNE_STRATEGIES)}.")
    removed = 0
    with transaction.atomic():
        for conversation in _threads(workspace=workspace, thread_ids=thread_ids).select_for_update():
            rows = Checkpoint.objects.filter(conversation=conversation)
            if strategy == "delete":
                CheckpointWrite.objects.filter(conversation=conversation).delete()
                removed += rows.delete()[0]
                continue
            latest: dict[str, str] = {}
            for ns, checkpoint_id in rows.values_list("checkpoint_ns", "checkpoint_id"):
                if ns not in latest or checkpoint_id > latest[ns]:
                    latest[ns] = checkpoint_id
            for ns, keep in latest.items():
                removed += rows.filter(checkpoint_ns=ns).exclude(checkpoint_id=keep).delete()[0]
                CheckpointWrite.objects.filter(conversation=conversation, checkpoint_ns=ns).exclude(
                    checkpoint_id=keep
                ).delete()
    return removed


def _copies(rows, **overrides) -> list:
    """Unsaved copies of `rows` (every column but the primary key and creation
    time), with `overrides` (column names) applied: a new column is copied
    without touching this."""
    copies = []
    for row in rows:
        model = type(row)
        values = {
            field.attname: getattr(row, field.attname)
            for field in model._meta.concrete_fields
            if not field.primary_key and not getattr(field, "auto_now_add", False)
        }
        values.update(overrides)
        copies.append(model(**values))
    return copies
