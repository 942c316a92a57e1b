"""LangGraph checkpoints: a thread is a conversation; checkpoints and pending
writes are stored as the saver serialized them (type string + raw bytes).

Semantics follow LangGraph's own savers: `put` upserts by
(thread, namespace, checkpoint id) with the config's checkpoint id as parent;
regular writes (idx >= 0) are insert-or-ignore, special ones (idx < 0:
error, interrupt, resume ...) overwrite. The statements that store them are
in `checkpoint_upserts`.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import Workspace
from conversations.models import Conversation, FrameworkSource
from conversations.services import (
    conversation_delete,
    validate_conversation_id,
)
from framework_state.models import Checkpoint, CheckpointWrite
from framework_state.services.checkpoint_upserts import (
    CheckedPut,
    CheckedWrites,
    checkpoints_store,
    thread_get_or_create,
    threads_of,
)
from framework_state.services.common import clean_list, clean_text, contains_nul
from memory_project.db import (
    new_object,
)
from memory_project.erasure import erasure_on_disk
from memory_project.errors import ValidationError

MAX_NS_BYTES = 512
MAX_ID_BYTES = 64
MAX_WRITES_PER_REQUEST = 5000
MAX_IDS_PER_REQUEST = 1000
PRUNE_STRATEGIES = ("keep_latest", "delete")
# A deletion of checkpoints ends on disk (`memory_project.erasure`): their blobs hold the graph's state.
CHECKPOINT_TABLES = (Checkpoint._meta.db_table, CheckpointWrite._meta.db_table)


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


def _clean_put(
    *, workspace: Workspace, thread_id: Any, checkpoint_ns: Any, checkpoint_id: Any, parent_checkpoint_id: Any,
    type: Any, checkpoint: Any, metadata: Any,
) -> CheckedPut:
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
    return CheckedPut(thread_id, row)


def _clean_writes(
    *, workspace: Workspace, thread_id: Any, checkpoint_ns: Any, checkpoint_id: Any, task_id: Any, task_path: Any,
    writes: Any,
) -> CheckedWrites:
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
    return CheckedWrites(thread_id, rows, len(cleaned))


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
    namespace, id): one statement (`checkpoints_store`), on PostgreSQL also for a
    thread's first checkpoint, which creates the thread."""
    put = _clean_put(
        workspace=workspace, thread_id=thread_id, checkpoint_ns=checkpoint_ns, checkpoint_id=checkpoint_id,
        parent_checkpoint_id=parent_checkpoint_id, type=type, checkpoint=checkpoint, metadata=metadata,
    )
    checkpoints_store(workspace, [put], [])
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
    checkpoints_store(workspace, [], [task])
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
    puts: list[CheckedPut] = []
    writes: list[CheckedWrites] = []
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
    checkpoints_store(workspace, puts, writes)
    return results


def _op_body(op: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    body = {name: op.get(name) for name in names}
    if "metadata" in names and "metadata" not in op:
        body["metadata"] = {}  # as the put endpoint: absent metadata is empty
    return body


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
        erasure_on_disk(CHECKPOINT_TABLES)
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
        if doomed:
            erasure_on_disk(CHECKPOINT_TABLES)
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
        target = thread_get_or_create(workspace=workspace, thread_id=target_thread_id)
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
        for conversation in threads_of(workspace=workspace, thread_ids=thread_ids).select_for_update():
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
        if removed:
            erasure_on_disk(CHECKPOINT_TABLES)
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
