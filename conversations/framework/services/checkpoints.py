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
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from accounts.models import Workspace
from conversations.framework.services.common import clean_list, clean_text, contains_nul
from conversations.models import Checkpoint, CheckpointWrite, Conversation, FrameworkSource
from conversations.services import conversation_delete, conversation_get_or_create, validate_conversation_id
from memory_project.db import cast_type, column, fetch_one, insert_objects, on_conflict_sql, prepared_cursor, table
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


def clean_thread_id(value: Any) -> str:
    return validate_conversation_id(value)


def clean_ns(value: Any) -> str:
    return clean_text("" if value is None else value, field="checkpoint_ns", max_bytes=MAX_NS_BYTES, allow_empty=True)


def _thread(*, workspace: Workspace, thread_id: str) -> Conversation:
    conversation, _ = conversation_get_or_create(
        workspace=workspace, external_id=thread_id, source=FrameworkSource.LANGGRAPH
    )
    return conversation


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
    namespace, id): one upsert statement once the thread exists."""
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
    row = Checkpoint(
        workspace=workspace,
        checkpoint_ns=checkpoint_ns,
        checkpoint_id=checkpoint_id,
        parent_checkpoint_id=parent_checkpoint_id,
        type=type_,
        checkpoint=data,
        metadata=metadata,
        run_id=run_id,
        created_at=timezone.now(),
    )
    # One statement is its own transaction: no BEGIN / COMMIT round trips
    # around it while the thread exists.
    row.pk = _upsert_checkpoint(row, thread_id=thread_id)
    if row.pk is None:
        with transaction.atomic():
            # The thread's first checkpoint: its conversation is created first.
            _thread(workspace=workspace, thread_id=thread_id)
            row.pk = _upsert_checkpoint(row, thread_id=thread_id)
    return row


# Columns a repeated put of the same checkpoint id overwrites (LangGraph's savers upsert).
_CHECKPOINT_UPDATED = ("workspace", "parent_checkpoint_id", "type", "checkpoint", "metadata", "run_id")


def _upsert_checkpoint(row: Checkpoint, *, thread_id: str) -> int | None:
    """`INSERT ... SELECT ... ON CONFLICT DO UPDATE`: one statement, the
    thread's conversation found by its id in the same statement. Returns the
    row id, or None when the conversation does not exist yet."""
    fields = [f for f in Checkpoint._meta.concrete_fields if not f.primary_key and f.name != "conversation"]
    conversation = Conversation._meta
    qn = connection.ops.quote_name
    values = [f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields]
    columns = ", ".join(qn(f.column) for f in fields)
    conflict = on_conflict_sql(Checkpoint, ("conversation", "checkpoint_ns", "checkpoint_id"),
                               update=_CHECKPOINT_UPDATED)
    sql = (
        f"INSERT INTO {table(Checkpoint)} ({columns}, {column(Checkpoint, 'conversation')}) "
        f"SELECT {', '.join(['%s'] * len(fields))}, c.{qn(conversation.pk.column)} FROM {table(Conversation)} c "
        f"WHERE c.{column(Conversation, 'workspace')} = %s AND c.{column(Conversation, 'external_id')} = %s "
        f"{conflict} RETURNING {qn(Checkpoint._meta.pk.column)}"
    )
    found = fetch_one(sql, [*values, row.workspace_id, thread_id], prepared=True)
    return found[0] if found else None


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

    One multi-row upsert: a regular write (idx >= 0) already stored is kept
    (a replay), a special one (idx < 0) is overwritten."""
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
    if not by_idx:
        return 0
    rows = [
        CheckpointWrite(workspace=workspace, checkpoint_ns=checkpoint_ns, checkpoint_id=checkpoint_id, task_id=task_id,
                        task_path=task_path, **row)
        for row in by_idx.values()
    ]
    if _upsert_writes(rows, thread_id=thread_id):
        return len(cleaned)
    with transaction.atomic():
        conversation_id = (
            Conversation.objects.filter(workspace=workspace, external_id=thread_id).values_list("pk", flat=True).first()
        )
        if conversation_id is None:
            conversation_id = _thread(workspace=workspace, thread_id=thread_id).pk
        for row in rows:
            row.conversation_id = conversation_id
        insert_objects(
            rows,
            on_conflict=_WRITE_KEY,
            update=_WRITE_UPDATED,
            update_where=_overwritten(),
        )
    return len(cleaned)


_WRITE_KEY = ("conversation", "checkpoint_ns", "checkpoint_id", "task_id", "idx")
_WRITE_UPDATED = ("task_path", "channel", "type", "value")


def _overwritten() -> str:
    """The upsert's condition: a special write (negative idx: an error, an
    interrupt) overwrites the stored one; a regular write already stored is kept."""
    return f"excluded.{column(CheckpointWrite, 'idx')} < 0"


def _upsert_writes(rows: list[CheckpointWrite], *, thread_id: str) -> bool:
    """The writes' upsert as one prepared statement, the thread's conversation
    found by its id in the same statement (`INSERT ... SELECT ... FROM
    conversation CROSS JOIN (VALUES ...)`). True when every row was written;
    False when some were not: the conversation did not exist yet (LangGraph
    sends a step's writes beside the put that creates the thread), or a
    replayed regular write was kept. The caller's transaction path then
    writes them, creating the thread if needed; repeating the upsert is
    harmless."""
    wr, conv = CheckpointWrite, Conversation
    fields = [f for f in wr._meta.concrete_fields if not f.primary_key and f.name != "conversation"]
    qn = connection.ops.quote_name
    # Without the column's length: a cast to varchar(n) would cut, not refuse.
    cast = "::{}".format if connection.vendor == "postgresql" else (lambda _: "")
    row_sql = "(" + ", ".join(f"%s{cast(cast_type(f))}" for f in fields) + ")"
    # A VALUES list's columns are column1, column2 ... on both databases.
    names = ", ".join(f"v.column{n}" for n in range(1, len(fields) + 1))
    conflict = on_conflict_sql(wr, _WRITE_KEY, update=_WRITE_UPDATED, update_where=_overwritten())
    sql = (
        f"INSERT INTO {table(wr)} ({', '.join(qn(f.column) for f in fields)}, {column(wr, 'conversation')}) "
        f"SELECT {names}, c.{column(conv, 'id')} FROM {table(conv)} c CROSS JOIN (VALUES "
        f"{', '.join([row_sql] * len(rows))}) AS v "
        f"WHERE c.{column(conv, 'workspace')} = %s AND c.{column(conv, 'external_id')} = %s "
        # `WHERE true` lets SQLite tell the upsert's ON from a join's.
        f"AND true {conflict} RETURNING 1"
    )
    params: list[Any] = []
    for row in rows:
        params.extend(f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields)
    params += [rows[0].workspace_id, thread_id]
    with prepared_cursor() as cursor:
        cursor.execute(sql, params)
        # Asking afterwards whether the conversation exists would race with
        # the put that creates it: only the rows returned are known written.
        return len(cursor.fetchall()) == len(rows)


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
    target_thread_id = clean_thread_id(target_thread_id)
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
