"""The append hot path: its statements, one transaction, and the pending work
the memory pipeline reads off the branch counters.

Counts are inside the test's own transaction, so each service's atomic block
shows as a SAVEPOINT / RELEASE pair around its statements.
"""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings
from django.utils import timezone

from conversations import hooks
from conversations.models import Branch, Conversation, Message
from conversations.selectors.branches import branch_pending_annotations
from conversations.services import (
    branch_create,
    branch_mark_processed,
    message_append,
    message_delete,
    message_update,
    messages_append,
    messages_clear,
    new_messages,
)
from conversations.services.append_sql import keys_used, keys_used_statement
from memories.models import MemoryJob
from memories.services.jobs import PENDING_REDISPATCH_AFTER
from memories.services.scopes import extraction_due_after
from memory_project.errors import ConflictError, QuotaExceededError, ValidationError
from tests.conversations.helpers_bulk import bulk_fill

pytestmark = pytest.mark.django_db


def _pending(external_id: str, name: str = "main") -> tuple[int, int]:
    row = (
        Branch.objects.filter(conversation__external_id=external_id, name=name)
        .annotate(**branch_pending_annotations())
        .values_list("pending_floors", "pending_tokens")
        .get()
    )
    return row


def _statements(ctx: CaptureQueriesContext) -> list[str]:
    return [q["sql"].split(" ", 1)[0] for q in ctx.captured_queries]


def test_an_append_is_two_updates_and_one_insert(workspace, django_assert_num_queries):
    message_append(workspace=workspace, external_id="c", role="user", content="first")
    with CaptureQueriesContext(connection) as ctx, django_assert_num_queries(5):
        message_append(workspace=workspace, external_id="c", role="user", content="second")
    assert _statements(ctx) == ["SAVEPOINT", "UPDATE", "UPDATE", "INSERT", "RELEASE"]


def test_an_idempotency_key_adds_one_lookup(workspace, django_assert_num_queries):
    message_append(workspace=workspace, external_id="c", role="user", content="first")
    with CaptureQueriesContext(connection) as ctx, django_assert_num_queries(6):
        message_append(workspace=workspace, external_id="c", role="user", content="second", idempotency_key="k2")
    assert _statements(ctx) == ["SELECT", "SAVEPOINT", "UPDATE", "UPDATE", "INSERT", "RELEASE"]
    with django_assert_num_queries(2):  # the replay: the lookup finds the key, the earlier message is read
        replay = message_append(workspace=workspace, external_id="c", role="user", content="second", idempotency_key="k2")
    assert not replay.created


def test_a_batch_of_100_costs_what_one_message_costs(workspace, django_assert_num_queries):
    message_append(workspace=workspace, external_id="c", role="user", content="first")
    batch = new_messages([{"role": "user" if i % 2 else "assistant", "content": f"m{i}"} for i in range(100)])
    with CaptureQueriesContext(connection) as ctx, django_assert_num_queries(5):
        result = messages_append(workspace=workspace, external_id="c", messages=batch)
    assert _statements(ctx) == ["SAVEPOINT", "UPDATE", "UPDATE", "INSERT", "RELEASE"]
    assert [m.floor_no for m in result.messages] == list(range(2, 102))
    assert Conversation.objects.get(external_id="c").message_count == 101
    assert list(Message.objects.order_by("floor_no").values_list("content", flat=True))[1:] == [f"m{i}" for i in range(100)]


def test_only_the_passages_are_written_after_commit_below_the_threshold(workspace, django_capture_on_commit_callbacks):
    message_append(workspace=workspace, external_id="c", role="user", content="opens the branch")
    with override_settings(MEMORY_EXTRACT_MIN_FLOORS=6, MEMORY_EXTRACT_MIN_TOKENS=100_000):
        for n in range(2, 6):
            with django_capture_on_commit_callbacks(execute=False) as callbacks:
                message_append(workspace=workspace, external_id="c", role="user", content=f"m{n}")
            with CaptureQueriesContext(connection) as ctx:
                for callback in callbacks:
                    callback()
            # The message's passages, searchable at once: one INSERT, nothing else.
            assert _statements(ctx) == ["INSERT"], f"append {n}: {ctx.captured_queries}"
            assert "memories_recallentry" in ctx.captured_queries[0]["sql"]
        assert not MemoryJob.objects.exists()
        # The sixth floor crosses the threshold: one job, queued after commit.
        with django_capture_on_commit_callbacks(execute=True):
            message_append(workspace=workspace, external_id="c", role="user", content="m6")
        assert MemoryJob.objects.filter(kind="extract", scope_id='["c","main"]').count() == 1
        with django_capture_on_commit_callbacks(execute=True):
            message_append(workspace=workspace, external_id="c", role="user", content="m7")
        assert MemoryJob.objects.count() == 1


def _append_user_turns(workspace, prefix: str, count: int) -> None:
    """`count` user messages in one batch append to conversation "c"."""
    messages_append(workspace=workspace, external_id="c", messages=new_messages(
        [{"role": "user", "content": f"{prefix}{i}"} for i in range(count)]))


def test_a_backlog_queues_again_each_time_it_doubles(workspace, django_capture_on_commit_callbacks):
    with override_settings(MEMORY_EXTRACT_MIN_FLOORS=3, MEMORY_EXTRACT_MIN_TOKENS=100_000):
        with django_capture_on_commit_callbacks(execute=True):
            _append_user_turns(workspace, "m", 3)
        job = MemoryJob.objects.get()
        job.status = "failed"  # lost: nothing reads the floors
        job.save(update_fields=["status"])
        for n in range(3):
            with django_capture_on_commit_callbacks(execute=True):
                message_append(workspace=workspace, external_id="c", role="user", content=f"more {n}")
    assert _pending("c")[0] == 6
    assert MemoryJob.objects.filter(status="pending").count() == 1


def test_a_doubling_backlog_whose_job_still_waits_costs_one_lookup(workspace, django_capture_on_commit_callbacks):
    with override_settings(MEMORY_EXTRACT_MIN_FLOORS=3, MEMORY_EXTRACT_MIN_TOKENS=100_000):
        with django_capture_on_commit_callbacks(execute=True):
            _append_user_turns(workspace, "m", 3)
        job = MemoryJob.objects.get()
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            _append_user_turns(workspace, "n", 3)  # 6 pending: due again
        with CaptureQueriesContext(connection) as ctx:
            for callback in callbacks:
                callback()
        assert _statements(ctx) == ["INSERT", "SELECT"]  # the passages, then the look-up of the waiting job
        # Dispatched long enough ago that its message may be lost: sent again.
        long_ago = timezone.now() - PENDING_REDISPATCH_AFTER - timedelta(seconds=1)
        MemoryJob.objects.filter(pk=job.pk).update(updated_at=long_ago)
        with mock.patch("memories.services.jobs.dispatch_on_commit") as dispatch, \
                django_capture_on_commit_callbacks(execute=True):
            _append_user_turns(workspace, "o", 6)  # 12 pending
        dispatch.assert_called_once_with(job.pk, redispatch=True)
    assert MemoryJob.objects.get().pk == job.pk


@pytest.mark.parametrize(
    ("before", "after", "due"),
    [(0, 2, False), (2, 3, True), (3, 5, False), (5, 6, True), (6, 9, False), (11, 12, True), (12, 23, False),
     (23, 24, True), (0, 100, True), (24, 47, False), (47, 48, True)],
)
def test_a_growing_backlog_is_due_at_the_threshold_times_a_power_of_two(before, after, due):
    with override_settings(MEMORY_EXTRACT_MIN_FLOORS=3, MEMORY_EXTRACT_MIN_TOKENS=100_000):
        assert extraction_due_after(floors_before=before, floors_after=after, tokens_before=0, tokens_after=1) is due


def test_pending_work_is_derived_from_the_counters(workspace):
    message_append(workspace=workspace, external_id="c", role="user", content="abcd" * 10)  # 10 tokens
    second = message_append(workspace=workspace, external_id="c", role="user", content="abcd" * 5).message
    assert _pending("c") == (2, 15)
    branch = Branch.objects.get(conversation__external_id="c", name="main")
    branch_mark_processed(branch_id=branch.pk, through_floor_no=1)
    assert _pending("c") == (1, 5)
    branch_mark_processed(branch_id=branch.pk, through_floor_no=1)  # never twice, never back
    branch_mark_processed(branch_id=branch.pk, through_floor_no=0)
    assert _pending("c") == (1, 5)
    message_update(workspace=workspace, external_id="c", message_id=second.pk, content="abcd" * 8)
    assert _pending("c") == (1, 8)
    message_delete(workspace=workspace, external_id="c", message_id=second.pk)
    # The floor number stays handed out; its tokens are gone.
    assert _pending("c") == (1, 0)
    message_append(workspace=workspace, external_id="c", role="user", content="abcd")
    messages_clear(workspace=workspace, external_id="c")
    assert _pending("c") == (0, 0)


def test_a_fork_counts_only_its_own_floors(workspace):
    for n in range(4):
        fork_at = message_append(workspace=workspace, external_id="c", role="user", content=f"main {n}").message
    branch_create(workspace=workspace, external_id="c", name="alt", from_message_id=fork_at.pk)
    assert _pending("c", "alt") == (0, 0)
    message_append(workspace=workspace, external_id="c", role="user", content="abcd", branch="alt")
    assert _pending("c", "alt") == (1, 1)


def test_batch_is_all_or_nothing(workspace):
    message_append(workspace=workspace, external_id="c", role="user", content="first")
    with pytest.raises(ValidationError, match=r"messages\[1\]\.role"):
        new_messages([{"role": "user", "content": "ok"}, {"role": "robot", "content": "no"}])
    bulk_fill(workspace, "full", 9_950)
    with pytest.raises(QuotaExceededError, match="Nothing was appended"):
        messages_append(workspace=workspace, external_id="full", messages=new_messages(
            [{"role": "user", "content": f"m{i}"} for i in range(51)]))
    assert Conversation.objects.get(external_id="full").message_count == 9_950
    result = messages_append(workspace=workspace, external_id="full", messages=new_messages(
        [{"role": "user", "content": f"m{i}"} for i in range(50)]))
    assert result.messages[-1].floor_no == 10_000
    with pytest.raises(QuotaExceededError, match="already holds 10000"):
        message_append(workspace=workspace, external_id="full", role="user", content="one too many")


def test_batch_idempotency_per_message(workspace):
    batch = new_messages([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], key_prefix="req-1")
    first = messages_append(workspace=workspace, external_id="c", messages=batch)
    again = messages_append(workspace=workspace, external_id="c", messages=batch)
    assert first.created and not again.created
    assert [m.pk for m in again.messages] == [m.pk for m in first.messages]
    assert Message.objects.count() == 2
    own = new_messages([{"role": "user", "content": "a", "idempotency_key": "req-1:0"}, {"role": "user", "content": "new"}])
    with pytest.raises(ConflictError):
        messages_append(workspace=workspace, external_id="c", messages=own)
    with pytest.raises(ValidationError, match="differ"):
        messages_append(workspace=workspace, external_id="c", messages=new_messages(
            [{"role": "user", "content": "x", "idempotency_key": "same"}, {"role": "user", "content": "y", "idempotency_key": "same"}]))
    assert Message.objects.count() == 2


def test_every_change_is_announced_after_commit(workspace, django_capture_on_commit_callbacks):
    seen: list[object] = []

    def receiver(sender, event, **kwargs):
        seen.append(event)

    signals = [hooks.messages_appended, hooks.message_edited, hooks.message_deleted, hooks.messages_cleared,
               hooks.conversation_deleted]
    for signal in signals:
        signal.connect(receiver, weak=False, dispatch_uid="test-receiver")
    try:
        with django_capture_on_commit_callbacks(execute=False) as pending:
            first = message_append(workspace=workspace, external_id="c", role="user", content="one").message
        assert seen == [] and len(pending) >= 1  # not before the commit
        for callback in pending:
            callback()
        with django_capture_on_commit_callbacks(execute=True):
            second = message_append(workspace=workspace, external_id="c", role="user", content="two").message
            message_update(workspace=workspace, external_id="c", message_id=first.pk, content="uno")
            message_delete(workspace=workspace, external_id="c", message_id=second.pk)
            messages_clear(workspace=workspace, external_id="c")
            from conversations.services import conversation_delete

            conversation_delete(workspace=workspace, external_id="c")
    finally:
        for signal in signals:
            signal.disconnect(dispatch_uid="test-receiver")
    appended, appended2, edited, deleted, cleared, gone = seen
    assert isinstance(appended, hooks.MessagesAppended) and appended.message_ids == (first.pk,)
    assert appended.opens_branch and appended.first_floor_no == appended.last_floor_no == 1
    assert appended.pending_floors == 1 and appended.workspace_id == workspace.pk
    assert not appended2.opens_branch and appended2.first_floor_no == 2 and appended2.pending_floors == 2
    assert isinstance(edited, hooks.MessageEdited) and (edited.message_id, edited.floor_no) == (first.pk, 1)
    assert edited.content_changed and edited.branch.name == "main"
    assert isinstance(deleted, hooks.MessageDeleted) and (deleted.message_id, deleted.floor_no) == (second.pk, 2)
    assert isinstance(cleared, hooks.MessagesCleared) and cleared.deleted_count == 1
    assert cleared.last_floor_nos == {appended.branch.id: 2}
    assert isinstance(gone, hooks.ConversationDeleted) and gone.external_id == "c"
    assert [b.name for b in gone.branches] == ["main"] and gone.conversation_id == appended.conversation_id


def test_a_failing_receiver_does_not_fail_the_append(workspace, django_capture_on_commit_callbacks, caplog):
    def broken(sender, event, **kwargs):
        raise RuntimeError("listener down")

    hooks.messages_appended.connect(broken, weak=False, dispatch_uid="broken")
    try:
        with django_capture_on_commit_callbacks(execute=True):
            result = message_append(workspace=workspace, external_id="c", role="user", content="kept")
    finally:
        hooks.messages_appended.disconnect(dispatch_uid="broken")
    assert result.created and Message.objects.filter(pk=result.message.pk).exists()
    assert "listener down" in caplog.text


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_a_key_lookup_probes_the_index_per_key_in_its_prepared_plan(workspace):
    """The lookup of a batch's idempotency keys stays an index probe per key
    when PostgreSQL plans it once for any keys (as the prepared statement is),
    instead of reading every keyed message of the workspace."""
    messages_append(workspace=workspace, external_id="c",
                    messages=new_messages([{"role": "user", "content": f"m{n}", "idempotency_key": f"key-{n}"}
                                           for n in range(50)]))
    assert keys_used(workspace, ["nope", "key-7"]) and not keys_used(workspace, ["nope"])
    sql, _ = keys_used_statement(workspace, ["a", "b"])
    with connection.cursor() as cursor:
        cursor.execute("SET plan_cache_mode = force_generic_plan")
        cursor.execute("PREPARE keys_used (varchar[], varchar) AS " + sql.replace("%s", "$1", 1).replace("%s", "$2", 1))
        try:
            cursor.execute("EXPLAIN EXECUTE keys_used ('{a,b}', %s)", [workspace.pk])
            plan = "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("DEALLOCATE keys_used")
            cursor.execute("RESET plan_cache_mode")
    assert "Index Cond" in plan and "idempotency_key = " in plan and "Filter" not in plan, plan
