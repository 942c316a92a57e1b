"""The framework adapters' hot paths at their anchors: statement counts pinned,
and reads whose cost does not grow with the session.

Inside the test's transaction a service's atomic block shows as a SAVEPOINT /
RELEASE pair; a single-statement write runs without one.
"""

from __future__ import annotations

import base64

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from conversations.models import Conversation, FrameworkSource, Message
from conversations.services import conversation_get_or_create
from framework_state import selectors
from framework_state.models import Checkpoint, CheckpointWrite, SessionEntry
from framework_state.services import checkpoints, claude, openai
from tests.conversations.helpers_bulk import bulk_fill

pytestmark = pytest.mark.django_db


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _put(workspace, checkpoint_id: str, blob: bytes = b"state", **extra):
    return checkpoints.checkpoint_put(
        workspace=workspace, thread_id="t", checkpoint_ns="", checkpoint_id=checkpoint_id,
        parent_checkpoint_id=extra.pop("parent", None), type="msgpack", checkpoint=_b64(blob),
        metadata=extra.pop("metadata", {"step": 1}),
    )


def test_checkpoint_put_is_one_upsert(workspace, django_assert_num_queries):
    _put(workspace, "0001")  # the thread's first put also creates its conversation
    with CaptureQueriesContext(connection) as ctx, django_assert_num_queries(1):
        _put(workspace, "0002", parent="0001")
    # A lone put, on both databases: INSERT ... SELECT (the thread found by its id) ... ON CONFLICT.
    assert ctx.captured_queries[0]["sql"].startswith("INSERT") and "ON CONFLICT" in ctx.captured_queries[0]["sql"]
    every_byte = bytes(range(256)) * 3
    metadata = {"step": 2, "writes": {"n\u00f6de": [1, None, "\u00e9t\u00e9"]}, "run_id": "run-7"}
    with django_assert_num_queries(1):  # the same id again: replaced in place
        _put(workspace, "0002", blob=every_byte, parent="0001", metadata=metadata)
    row = Checkpoint.objects.get(checkpoint_id="0002")
    assert bytes(row.checkpoint) == every_byte and row.metadata == metadata and row.parent_checkpoint_id == "0001"
    assert row.run_id == "run-7" and row.type == "msgpack"
    assert Checkpoint.objects.count() == 2


def test_a_put_with_a_parent_creates_a_thread_not_stored_yet(workspace):
    """A put names a parent (so its thread is taken to exist) of a thread
    this workspace has not stored: the lone upsert writes nothing, and the
    thread is created with the checkpoint."""
    checkpoints.checkpoint_put(
        workspace=workspace, thread_id="elsewhere-first", checkpoint_ns="ns", checkpoint_id="0002",
        parent_checkpoint_id="0001", type="msgpack", checkpoint=_b64(b"state"), metadata={},
    )
    row = Checkpoint.objects.get()
    assert row.conversation.external_id == "elsewhere-first" and row.conversation.workspace_id == workspace.pk
    assert (row.checkpoint_ns, row.checkpoint_id, row.parent_checkpoint_id) == ("ns", "0002", "0001")
    assert row.conversation.branches.get().name == "main"


def test_get_tuple_is_one_statement_with_its_writes(workspace, django_assert_num_queries):
    _put(workspace, "0001")
    _put(workspace, "0002", parent="0001", metadata={"step": 2, "nested": {"k": [1]}})
    checkpoints.checkpoint_writes_put(
        workspace=workspace, thread_id="t", checkpoint_ns="", checkpoint_id="0002", task_id="task-b", task_path="p",
        writes=[{"idx": 1, "channel": "c2", "type": "json", "value": _b64(b"2")},
                {"idx": 0, "channel": "c1", "type": "json", "value": _b64(b"1")}],
    )
    with django_assert_num_queries(1):
        latest = selectors.checkpoint_tuple(workspace=workspace, thread_id="t", checkpoint_ns="", checkpoint_id=None)
    assert latest["checkpoint_id"] == "0002" and latest["parent_checkpoint_id"] == "0001"
    assert latest["metadata"] == {"step": 2, "nested": {"k": [1]}}
    assert [(w["channel"], base64.b64decode(w["value"])) for w in latest["pending_writes"]] == [("c1", b"1"), ("c2", b"2")]
    with django_assert_num_queries(1):
        first = selectors.checkpoint_tuple(workspace=workspace, thread_id="t", checkpoint_ns="", checkpoint_id="0001")
    assert first["pending_writes"] == [] and base64.b64decode(first["checkpoint"]) == b"state"
    assert selectors.checkpoint_tuple(workspace=workspace, thread_id="nope", checkpoint_ns="", checkpoint_id=None) is None


def test_a_threads_reads_stay_in_its_workspace(workspace, other_workspace):
    """Checkpoints are read by their thread, found in the caller's workspace:
    the same thread id in another workspace is another thread."""
    _put(workspace, "0001", blob=b"mine")
    _put(other_workspace, "0001", blob=b"theirs")
    _put(other_workspace, "0002", blob=b"theirs, later", parent="0001")
    mine = selectors.checkpoint_tuple(workspace=workspace, thread_id="t", checkpoint_ns="", checkpoint_id=None)
    assert mine["checkpoint_id"] == "0001" and base64.b64decode(mine["checkpoint"]) == b"mine"
    assert selectors.checkpoint_tuple(workspace=workspace, thread_id="t", checkpoint_ns="", checkpoint_id="0002") is None
    page, _ = selectors.checkpoint_page(
        workspace=workspace, thread_id="t", checkpoint_ns=None, checkpoint_id=None, before=None, metadata_filter=None,
        limit=10, cursor=None,
    )
    assert [(row["checkpoint_id"], base64.b64decode(row["checkpoint"])) for row in page] == [("0001", b"mine")]
    theirs, _ = selectors.checkpoint_page(
        workspace=other_workspace, thread_id="t", checkpoint_ns="", checkpoint_id=None, before=None,
        metadata_filter=None, limit=10, cursor=None,
    )
    assert [row["checkpoint_id"] for row in theirs] == ["0002", "0001"]


def test_writes_are_one_upsert_keeping_regular_and_replacing_special(workspace, django_assert_num_queries):
    _put(workspace, "0001")

    def put(writes):
        return checkpoints.checkpoint_writes_put(
            workspace=workspace, thread_id="t", checkpoint_ns="", checkpoint_id="0001", task_id="task", task_path="",
            writes=writes,
        )

    put([{"idx": 0, "channel": "a", "type": "json", "value": _b64(b"first")},
         {"idx": -1, "channel": "__error__", "type": "json", "value": _b64(b"e1")}])
    # New writes and a special one: one INSERT ... SELECT (the thread found
    # by its id) ... ON CONFLICT.
    with django_assert_num_queries(1):
        put([{"idx": -1, "channel": "__error__", "type": "json", "value": _b64(b"e2")},
             {"idx": 1, "channel": "b", "type": "json", "value": _b64(b"new")}])
    # A replayed regular write is kept. PostgreSQL's statement tells a kept
    # write from a missing thread; on SQLite, as the upsert wrote fewer rows
    # than it was given, the transaction path runs: SAVEPOINT, the thread's
    # id, the same upsert, RELEASE.
    with django_assert_num_queries(1 if connection.vendor == "postgresql" else 5):
        put([{"idx": 0, "channel": "a", "type": "json", "value": _b64(b"replayed")},
             {"idx": -1, "channel": "__error__", "type": "json", "value": _b64(b"e3")}])
    stored = {w.idx: bytes(w.value) for w in CheckpointWrite.objects.all()}
    assert stored == {0: b"first", -1: b"e3", 1: b"new"}


def test_writes_to_a_new_thread_create_it(workspace):
    checkpoints.checkpoint_writes_put(
        workspace=workspace, thread_id="fresh", checkpoint_ns="", checkpoint_id="0001", task_id="task", task_path="",
        writes=[{"idx": 0, "channel": "a", "type": "json", "value": _b64(b"v")}],
    )
    write = CheckpointWrite.objects.get()
    assert write.conversation.external_id == "fresh" and bytes(write.value) == b"v"


def _creation_shape(conversation) -> tuple:
    branch = conversation.branches.get()
    return (
        conversation.user_id, conversation.metadata, conversation.message_count, conversation.source,
        conversation.last_message_at == conversation.created_at,
        branch.name, branch.parent_id, branch.fork_message_id, branch.fork_floor_no, branch.next_floor_no,
        branch.appended_tokens, branch.processed_floor_no, branch.processed_tokens,
    )


def test_a_threads_first_put_creates_it_as_the_orm_would(workspace, django_assert_num_queries):
    # A put without a parent starts a thread: on PostgreSQL the statement that
    # stores it also creates the conversation and its main branch.
    if connection.vendor == "postgresql":
        with django_assert_num_queries(1):
            _put(workspace, "0001")
    else:  # SQLite creates it in the transaction path, through the ORM
        _put(workspace, "0001")
    made = Conversation.objects.get(workspace=workspace, external_id="t")
    reference, _ = conversation_get_or_create(workspace=workspace, external_id="ref", source=FrameworkSource.LANGGRAPH)
    assert _creation_shape(made) == _creation_shape(reference)
    assert made.last_message_at == made.created_at and made.source == "langgraph"
    assert Checkpoint.objects.get().conversation_id == made.pk


def test_writes_to_a_new_thread_on_postgresql_are_two_statements(workspace, django_assert_num_queries):
    if connection.vendor != "postgresql":
        pytest.skip("the one-statement creation is PostgreSQL's")
    # Writes name no parent: the lean statement finds no thread, the
    # creating one makes it and stores them.
    with django_assert_num_queries(2):
        checkpoints.checkpoint_writes_put(
            workspace=workspace, thread_id="w-new", checkpoint_ns="", checkpoint_id="0001", task_id="task",
            task_path="", writes=[{"idx": 0, "channel": "a", "type": "json", "value": _b64(b"v")}],
        )
    # A batch naming a thread that exists and one that does not.
    _put(workspace, "0001")
    ops = [
        {"op": "put", "thread_id": "t", "checkpoint_id": "0002", "parent_checkpoint_id": "0001", "type": "msgpack",
         "checkpoint": _b64(b"s2")},
        {"op": "put", "thread_id": "other", "checkpoint_id": "0001", "type": "msgpack", "checkpoint": _b64(b"o1")},
    ]
    # The creating statement, in a transaction of its own (a savepoint inside
    # the test's) so that it keeps none of its threads unless it stored all.
    with CaptureQueriesContext(connection) as ctx:
        checkpoints.checkpoint_batch(workspace=workspace, ops=ops)
    assert [q["sql"].split(" ", 1)[0] for q in ctx.captured_queries] == ["SAVEPOINT", "WITH", "RELEASE"]
    assert sorted(Checkpoint.objects.values_list("conversation__external_id", "checkpoint_id")) == [
        ("other", "0001"), ("t", "0001"), ("t", "0002")]
    assert Conversation.objects.filter(workspace=workspace).count() == 3
    assert all(c.branches.count() == 1 for c in Conversation.objects.all())


def test_openai_session_read_does_not_grow_with_the_session(workspace, django_assert_num_queries):
    bulk_fill(workspace, "long", 5_000)
    with CaptureQueriesContext(connection) as ctx, django_assert_num_queries(1):
        items = selectors.session_items(workspace=workspace, session_id="long", limit=20)
    assert [item["content"] for item in items] == [f"message {n}" for n in range(4_981, 5_001)]
    sql = ctx.captured_queries[0]["sql"]
    assert "LIMIT" in sql and "ORDER BY" in sql and '"floor_no" DESC' in sql
    if connection.vendor == "postgresql":
        # The statement as logged, its values written in.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
            cursor.execute("EXPLAIN " + sql)
            plan = "\n".join(row[0] for row in cursor.fetchall())
        assert "Index Scan Backward" in plan and "uniq_message_floor" in plan, plan
    assert selectors.session_items(workspace=workspace, session_id="missing", limit=20) == []


def test_openai_add_items_is_one_batch_append(workspace, django_assert_num_queries):
    openai.session_items_add(workspace=workspace, session_id="s", items=[{"role": "user", "content": "hi"}])
    items = [{"role": "user", "content": "q"}, {"type": "function_call", "name": "f", "arguments": "{}"},
             {"type": "function_call_output", "output": "42"}, {"role": "assistant", "content": "a"}]
    # The keys already used, then SAVEPOINT, UPDATE conversation, UPDATE branch, INSERT, RELEASE
    with django_assert_num_queries(6):
        assert openai.session_items_add(workspace=workspace, session_id="s", items=items, idempotency_key="k") == 4
    with django_assert_num_queries(2):  # a retried batch: the keys are found and read, nothing is written
        openai.session_items_add(workspace=workspace, session_id="s", items=items, idempotency_key="k")
    assert Message.objects.count() == 5
    assert selectors.session_items(workspace=workspace, session_id="s", limit=None)[1:] == items


def test_claude_append_is_one_batch(workspace):
    key = claude.clean_key(project_key="/proj", session_id="s1")
    claude.session_entries_append(workspace=workspace, key=key, entries=[{"type": "user", "uuid": "u0",
                                                                          "message": {"content": "start"}}])
    entries = []
    for n in range(200):
        kind = ("user", "assistant", "progress")[n % 3]
        entries.append({"type": kind, "uuid": f"u{n + 1}", "message": {"content": f"line {n}"}})
    with CaptureQueriesContext(connection) as ctx:
        outcome = claude.session_entries_append(workspace=workspace, key=key, entries=entries)
    inserts = [q["sql"] for q in ctx.captured_queries if q["sql"].startswith("INSERT")]
    assert len(inserts) == 2  # the mirrored messages, then the entries
    # The session row lock, the stream's known uuids, the batch append (its
    # savepoint, two UPDATEs, one INSERT), the entries' INSERT, the mtime.
    assert [q["sql"].split(" ", 1)[0] for q in ctx.captured_queries] == [
        "SAVEPOINT", "SELECT", "SELECT", "SAVEPOINT", "UPDATE", "UPDATE", "INSERT", "RELEASE", "INSERT", "UPDATE",
        "RELEASE",
    ]
    assert outcome.appended == 200
    mirrored = SessionEntry.objects.filter(message__isnull=False).order_by("id")
    assert mirrored.count() == 1 + 134
    assert [e.message.content for e in mirrored[:3]] == ["start", "line 0", "line 1"]
    assert list(Message.objects.order_by("floor_no").values_list("floor_no", flat=True)) == list(range(1, 136))


def test_a_batch_of_puts_and_writes_is_one_statement_on_postgresql(workspace, django_assert_num_queries):
    _put(workspace, "0001")  # the thread exists
    ops = [
        {"op": "put", "thread_id": "t", "checkpoint_id": "0002", "parent_checkpoint_id": "0001", "type": "msgpack",
         "checkpoint": _b64(b"s2"), "metadata": {"step": 2}},
        {"op": "put_writes", "thread_id": "t", "checkpoint_id": "0002", "task_id": "a",
         "writes": [{"idx": 0, "channel": "x", "type": "json", "value": _b64(b"1")}]},
        {"op": "put_writes", "thread_id": "t", "checkpoint_id": "0002", "task_id": "b",
         "writes": [{"idx": 0, "channel": "y", "type": "json", "value": _b64(b"2")}]},
    ]
    # One statement is its own transaction on PostgreSQL; SQLite writes the
    # batch in one transaction (SAVEPOINT inside the test's), the threads' ids,
    # one INSERT per table, RELEASE.
    with django_assert_num_queries(1 if connection.vendor == "postgresql" else 5):
        checkpoints.checkpoint_batch(workspace=workspace, ops=ops)
    assert Checkpoint.objects.count() == 2
    assert sorted(CheckpointWrite.objects.values_list("task_id", "channel")) == [("a", "x"), ("b", "y")]
