"""Real concurrent writers on PostgreSQL: the message cap, auto-creation and cursors."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections

from conversations.models import MAX_MESSAGES_PER_CONVERSATION, Branch, Conversation, Message
from conversations.selectors.messages import message_page
from conversations.services import message_append
from memory_project.errors import ConflictError, QuotaExceededError
from tests.conversations.helpers_bulk import bulk_fill

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _in_thread(fn):
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        finally:
            connections.close_all()

    return run


def test_cap_holds_under_concurrent_appenders(workspace):
    conversation = bulk_fill(workspace, "busy", MAX_MESSAGES_PER_CONVERSATION - 10)
    start = threading.Barrier(16)

    @_in_thread
    def appender(worker: int) -> list[str]:
        outcomes = []
        start.wait()
        for i in range(5):
            try:
                message_append(workspace=workspace, external_id="busy", role="user", content=f"w{worker}-{i}")
                outcomes.append("ok")
            except QuotaExceededError:
                outcomes.append("quota")
        return outcomes

    with ThreadPoolExecutor(16) as pool:
        outcomes = [o for result in pool.map(appender, range(16)) for o in result]
    assert outcomes.count("ok") == 10
    assert outcomes.count("quota") == 70
    conversation.refresh_from_db()
    assert conversation.message_count == MAX_MESSAGES_PER_CONVERSATION
    assert Message.objects.filter(conversation=conversation).count() == MAX_MESSAGES_PER_CONVERSATION
    floors = list(Message.objects.filter(conversation=conversation).order_by("floor_no").values_list("floor_no", flat=True))
    assert floors == list(range(1, MAX_MESSAGES_PER_CONVERSATION + 1))


def test_first_appends_race_to_create_one_conversation(workspace):
    start = threading.Barrier(8)

    @_in_thread
    def appender(worker: int) -> str:
        start.wait()
        return message_append(workspace=workspace, external_id="fresh", role="user", content=f"w{worker}", user_id="u").message.pk

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(appender, range(8)))
    assert len(set(ids)) == 8
    conversation = Conversation.objects.get(workspace=workspace, external_id="fresh")
    assert conversation.message_count == 8
    assert Branch.objects.filter(conversation=conversation).count() == 1
    assert sorted(Message.objects.values_list("floor_no", flat=True)) == list(range(1, 9))


def test_same_idempotency_key_from_concurrent_requests_writes_once(workspace):
    start = threading.Barrier(6)

    @_in_thread
    def appender(worker: int) -> tuple[str, bool]:
        start.wait()
        # Different conversations: the unique constraint, not the row lock, decides.
        result = message_append(workspace=workspace, external_id=f"c{worker % 2}", role="user", content="same", idempotency_key="k")
        return result.message.pk, result.created

    errors = []
    results = []
    with ThreadPoolExecutor(6) as pool:
        for future in [pool.submit(appender, w) for w in range(6)]:
            try:
                results.append(future.result())
            except Exception as exc:  # the other conversation's requests are refused as conflicts
                errors.append(type(exc).__name__)
    assert Message.objects.filter(idempotency_key="k").count() == 1
    assert sum(1 for _, created in results if created) == 1
    assert len({pk for pk, _ in results}) == 1
    assert set(errors) <= {"ConflictError"}
    assert len(results) + len(errors) == 6


def test_paging_during_concurrent_appends_never_skips_or_repeats(workspace):
    for i in range(5):
        message_append(workspace=workspace, external_id="live", role="user", content=f"seed{i}")
    stop = threading.Event()

    @_in_thread
    def writer(worker: int) -> int:
        count = 0
        while not stop.is_set() and count < 25:
            message_append(workspace=workspace, external_id="live", role="assistant", content=f"w{worker}-{count}")
            count += 1
        return count

    seen: list[str] = []
    with ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(writer, w) for w in range(3)]
        cursor = None
        idle_rounds = 0
        while idle_rounds < 3:
            page = message_page(workspace=workspace, external_id="live", limit=7, after=cursor)
            seen += [m.pk for m in page.messages]
            if page.messages:
                cursor = page.messages[-1].pk
            writers_done = all(f.done() for f in futures)
            idle_rounds = idle_rounds + 1 if (writers_done and not page.messages) else 0
        stop.set()
        written = sum(f.result() for f in futures)
    connection.close()
    expected = list(Message.objects.filter(conversation__external_id="live").order_by("floor_no").values_list("pk", flat=True))
    assert len(expected) == 5 + written
    assert seen == expected


def _statements(ctx) -> list[str]:
    return [q["sql"].split(" ", 1)[0] for q in ctx.captured_queries]


def test_an_append_outside_a_transaction_is_one_statement(workspace):
    from django.test.utils import CaptureQueriesContext

    from conversations.services import messages_append, new_messages
    from memory_project.errors import NotFoundError

    message_append(workspace=workspace, external_id="c", role="user", content="creates the conversation")
    with CaptureQueriesContext(connection) as ctx:
        second = message_append(workspace=workspace, external_id="c", role="user", content="second", user_id="u1")
    # One statement appends; the INSERT after it, once committed, puts the
    # message's passages in the recall index so it is searchable at once.
    assert _statements(ctx) == ["WITH", "INSERT"]
    assert second.created and second.message.floor_no == 2 and second.branch_name == "main"
    stored = Message.objects.get(pk=second.message.pk)
    assert (stored.content, stored.role, stored.floor_no, stored.metadata) == ("second", "user", 2, {})
    assert stored.created_at == second.message.created_at
    conversation = Conversation.objects.get(external_id="c")
    assert (conversation.message_count, conversation.user_id) == (2, "u1")
    assert conversation.last_message_at == second.message.created_at

    batch = new_messages([{"role": "assistant", "content": {"n": i}, "metadata": {"i": i}} for i in range(3)],
                         key_prefix="batch")
    with CaptureQueriesContext(connection) as ctx:
        result = messages_append(workspace=workspace, external_id="c", messages=batch)
    assert _statements(ctx) == ["WITH"]  # the keys are checked by the unique index, not looked up first
    assert [m.floor_no for m in result.messages] == [3, 4, 5]
    assert list(Message.objects.filter(floor_no__gte=3).order_by("floor_no").values_list("content", "metadata",
                                                                                          "idempotency_key")) == [
        ({"n": i}, {"i": i}, f"batch:{i}") for i in range(3)
    ]
    branch = Branch.objects.get(conversation=conversation, name="main")
    assert branch.next_floor_no == 6 and branch.appended_tokens == sum(
        Message.objects.filter(branch=branch).values_list("token_estimate", flat=True))
    # A retry of the batch is a replay: nothing written, the counters unmoved.
    replay = messages_append(workspace=workspace, external_id="c", messages=batch)
    assert not replay.created and [m.pk for m in replay.messages] == [m.pk for m in result.messages]
    assert Branch.objects.get(pk=branch.pk).next_floor_no == 6
    assert Conversation.objects.get(pk=conversation.pk).message_count == 5
    # Some keys used, others not: a conflict, nothing written.
    mixed = new_messages([{"role": "user", "content": {"n": 0}, "metadata": {"i": 0}, "idempotency_key": "batch:0"},
                          {"role": "user", "content": "new", "idempotency_key": "fresh"}])
    with pytest.raises(ConflictError):
        messages_append(workspace=workspace, external_id="c", messages=mixed)
    assert Message.objects.filter(conversation=conversation).count() == 5

    # A missing branch writes nothing, not even the conversation's counters.
    with pytest.raises(NotFoundError):
        message_append(workspace=workspace, external_id="c", role="user", content="x", branch="nope")
    conversation.refresh_from_db()
    assert conversation.message_count == 5


def test_an_append_past_the_cap_outside_a_transaction_writes_nothing(workspace):
    conversation = bulk_fill(workspace, "full", MAX_MESSAGES_PER_CONVERSATION - 1)
    last = message_append(workspace=workspace, external_id="full", role="user", content="the last one",
                          idempotency_key="last")
    # Its retry, once the conversation is full, is still a replay (not a quota error).
    retry = message_append(workspace=workspace, external_id="full", role="user", content="the last one",
                           idempotency_key="last")
    assert not retry.created and retry.message.pk == last.message.pk
    with pytest.raises(QuotaExceededError):
        message_append(workspace=workspace, external_id="full", role="user", content="one too many")
    conversation.refresh_from_db()
    assert conversation.message_count == MAX_MESSAGES_PER_CONVERSATION
    assert Message.objects.filter(conversation=conversation).count() == MAX_MESSAGES_PER_CONVERSATION


def test_first_checkpoint_batches_race_to_create_one_thread(workspace):
    import base64

    from framework_state.models import Checkpoint, CheckpointWrite
    from framework_state.services.checkpoints import checkpoint_batch

    start = threading.Barrier(8)
    blob = base64.b64encode(b"state").decode()

    @_in_thread
    def saver(worker: int) -> list:
        start.wait()
        ops = [
            {"op": "put", "thread_id": "lg-fresh", "checkpoint_id": f"c{worker}", "type": "msgpack", "checkpoint": blob,
             "metadata": {"step": worker}},
            {"op": "put_writes", "thread_id": "lg-fresh", "checkpoint_id": f"c{worker}", "task_id": "t",
             "writes": [{"idx": 0, "channel": "x", "type": "msgpack", "value": blob}]},
        ]
        return checkpoint_batch(workspace=workspace, ops=ops)

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(saver, range(8)))
    assert all(answer[1] == {"written": 1} for answer in answers)
    conversation = Conversation.objects.get(workspace=workspace, external_id="lg-fresh")
    assert Branch.objects.filter(conversation=conversation).count() == 1
    assert sorted(Checkpoint.objects.filter(conversation=conversation).values_list("checkpoint_id", flat=True)) == [
        f"c{worker}" for worker in range(8)]
    assert CheckpointWrite.objects.filter(conversation=conversation).count() == 8


def test_a_batch_that_loses_a_thread_creation_race_keeps_none_of_its_threads(workspace, monkeypatch):
    """A batch naming two new threads, one of them being created by another
    request meanwhile: the statement stores nothing, and the thread it did
    create goes too (here the fallback then fails, so nothing may remain)."""
    import base64

    from django.db import transaction

    from conversations.services import conversation_get_or_create
    from framework_state.models import Checkpoint
    from framework_state.services import checkpoint_upserts, checkpoints

    holding, release = threading.Event(), threading.Event()

    @_in_thread
    def other_request():
        with transaction.atomic():
            conversation_get_or_create(workspace=workspace, external_id="lg-b", source="langgraph")
            holding.set()
            release.wait(20)

    @_in_thread
    def commit_once_the_batch_waits():
        # The batch's insert of "lg-b" waits on the other request's row lock;
        # only then may that request commit.
        with connection.cursor() as cursor:
            for _ in range(400):
                cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
                if cursor.fetchone()[0]:
                    break
                threading.Event().wait(0.05)
        release.set()

    def fallback_fails(**kwargs):
        raise RuntimeError("the fallback transaction failed")

    other = threading.Thread(target=other_request)
    other.start()
    assert holding.wait(20)
    watcher = threading.Thread(target=commit_once_the_batch_waits)
    watcher.start()
    monkeypatch.setattr(checkpoint_upserts, "threads_of", fallback_fails)
    blob = base64.b64encode(b"state").decode()
    ops = [{"op": "put", "thread_id": name, "checkpoint_id": "c1", "type": "msgpack", "checkpoint": blob}
           for name in ("lg-a", "lg-b")]
    try:
        with pytest.raises(RuntimeError):
            checkpoints.checkpoint_batch(workspace=workspace, ops=ops)
    finally:
        release.set()
        watcher.join()
        other.join()
    assert list(Conversation.objects.filter(workspace=workspace).values_list("external_id", flat=True)) == ["lg-b"]
    assert Checkpoint.objects.count() == 0
