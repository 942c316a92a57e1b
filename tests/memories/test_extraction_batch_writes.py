"""The extraction batch's bulk writes: one locked read, one INSERT each of
items, versions, recall entries and edges, one UPDATE for deprecations of
earlier items; and batches written several to a commit make the same
memories as one by one."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.db.models import Q
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from accounts.actors import Actor
from conversations.models import Conversation
from memories.extraction.types import ExtractedFact, ExtractedLoop, ExtractionResult, Resolution, Turn
from memories.models import (
    JobKind,
    LifecycleStatus,
    MemoryEdge,
    MemoryItem,
    MemoryJob,
    MemoryType,
    MemoryVersion,
    Scope,
    ScopeState,
    Status,
)
from memories.recall.models import RecallEntry
from memories.services.items import memory_item_create
from memories.services.jobs import memory_job_enqueue
from memories.services.pipeline import extract as extract_module
from memories.services.pipeline import writes
from memories.services.pipeline.execute import memory_job_execute
from memories.services.pipeline.writes import destination_for, write_batch
from memories.services.scopes import branch_scope_id
from tests.factories import append_messages
from tests.memories.pipeline_helpers import load_fixture

pytestmark = pytest.mark.django_db(transaction=False)

SCOPE_ID = branch_scope_id("conv-batch", "main")


def _fact(key: str, content: str, floor_no: int) -> ExtractedFact:
    return ExtractedFact(key=key, value=content, content=content, importance=0.7, confidence=0.9,
                         floor_no=floor_no, message_id=f"msg-{floor_no}")


def _turns(first: int, last: int) -> list[Turn]:
    return [Turn(floor_no=n, message_id=f"msg-{n}", role="user", text=f"turn {n}") for n in range(first, last + 1)]


def _write(workspace, job, result: ExtractionResult, turns: list[Turn]):
    destination = destination_for(scope="branch", scope_id=SCOPE_ID, user_id=None)
    return write_batch(job=job, destination=destination, result=result, turns=turns, review=False)


def test_a_batch_supersedes_deduplicates_and_closes_in_bulk(workspace, django_assert_num_queries):
    job = MemoryJob.objects.create(workspace=workspace, kind=JobKind.EXTRACT, scope="branch", scope_id=SCOPE_ID)
    _write(workspace, job, ExtractionResult(
        language="en", summary="First batch.", rolling_summary="",
        facts=[_fact("user.location", "Lives in Berlin", 1), _fact("user.diet", "Is vegetarian", 2)],
        open_loops=[ExtractedLoop(ref="new:0", content="To do: renew passport", importance=0.7, floor_no=3,
                                  message_id="msg-3")],
    ), _turns(1, 3))
    berlin = MemoryItem.objects.get(workspace=workspace, content="Lives in Berlin")
    passport = MemoryItem.objects.get(workspace=workspace, content="To do: renew passport")

    # Second batch: a new value of a key, then a newer one in the same batch;
    # a value already known; a loop opened and closed in the batch, an existing
    # loop closed, and an id that names nothing.
    result = ExtractionResult(
        language="en", summary="Second batch.", rolling_summary="",
        facts=[_fact("user.location", "Lives in Lisbon", 4), _fact("user.diet", "Is vegetarian", 5),
               _fact("user.location", "Lives in Porto", 6)],
        open_loops=[ExtractedLoop(ref="new:0", content="To do: book hotel", importance=0.7, floor_no=7,
                                  message_id="msg-7")],
        resolutions=[Resolution(target="new:0", floor_no=8, message_id="msg-8"),
                     Resolution(target=passport.pk, floor_no=8, message_id="msg-8"),
                     Resolution(target="mem_made_up", floor_no=8, message_id="msg-8")],
    )
    # The locked read, then one INSERT each of items, versions, recall entries,
    # one UPDATE for the deprecations and one INSERT of edges.
    with django_assert_num_queries(6):
        counts = _write(workspace, job, result, _turns(4, 8))

    assert (counts.facts, counts.facts_unchanged, counts.facts_updated, counts.open_loops, counts.resolved) == \
        (2, 1, 2, 1, 2)
    items = {item.content: item for item in MemoryItem.objects.filter(workspace=workspace)}
    micro = items["Second batch."]
    lisbon, porto, hotel = items["Lives in Lisbon"], items["Lives in Porto"], items["To do: book hotel"]
    assert MemoryItem.objects.filter(workspace=workspace, content="Is vegetarian").count() == 1
    for item in (berlin, lisbon, passport, hotel):
        item = items[item.content]
        assert (item.status, item.lifecycle_status, item.version) == ("deprecated", "deprecated", 2)
        head = MemoryVersion.objects.get(pk=item.current_version_id)
        assert (head.memory_id, head.version, head.operation) == (item.pk, 2, "modified")
        assert head.attributes["status"] == "deprecated" and head.actor_job_id == job.pk
        assert list(MemoryVersion.objects.filter(memory_id=item.pk).order_by("version")
                    .values_list("operation", flat=True)) == ["created", "modified"]
    assert (porto.status, porto.version) == ("active", 1)
    assert MemoryVersion.objects.get(pk=porto.current_version_id).operation == "created"
    edges = set(MemoryEdge.objects.filter(workspace=workspace, from_item__in=[micro, lisbon, porto, hotel])
                .values_list("from_item_id", "to_item_id", "relation"))
    assert edges == {
        (lisbon.pk, micro.pk, "derived_from"), (porto.pk, micro.pk, "derived_from"), (hotel.pk, micro.pk, "derived_from"),
        (lisbon.pk, berlin.pk, "updates"), (porto.pk, lisbon.pk, "updates"),
        (micro.pk, hotel.pk, "resolves"), (micro.pk, passport.pk, "resolves"),
    }
    assert counts.edges == len(edges)
    # Every new item is in the recall index, its terms from its text.
    for item in (micro, lisbon, porto, hotel):
        entry = RecallEntry.objects.get(memory_id=item.pk)
        assert entry.content_sha256 == item.content_sha256 and entry.length > 0
    assert items["Lives in Porto"].sources == ["msg-6"]


def test_what_a_batch_creates_and_deprecates_is_inserted_as_it_ends(workspace):
    """A value replaced and a task opened and closed in the same batch are
    inserted deprecated, at version 2 with their `modified` version current
    and both versions kept: no UPDATE of the items."""
    job = MemoryJob.objects.create(workspace=workspace, kind=JobKind.EXTRACT, scope="branch", scope_id=SCOPE_ID)
    result = ExtractionResult(
        language="en", summary="One batch.", rolling_summary="",
        facts=[_fact("user.location", "Lives in Lisbon", 1), _fact("user.location", "Lives in Porto", 2)],
        open_loops=[ExtractedLoop(ref="new:0", content="To do: book hotel", importance=0.7, floor_no=3,
                                  message_id="msg-3")],
        resolutions=[Resolution(target="new:0", floor_no=4, message_id="msg-4")],
    )
    with CaptureQueriesContext(connection) as queries:
        counts = _write(workspace, job, result, _turns(1, 4))

    assert not [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith("UPDATE")]
    assert (counts.facts, counts.facts_updated, counts.open_loops, counts.resolved) == (2, 1, 1, 1)
    assert counts.writes.deprecated_ids == [item.pk for item in counts.writes.items
                                            if item.content in ("Lives in Lisbon", "To do: book hotel")]
    for content in ("Lives in Lisbon", "To do: book hotel"):
        item = MemoryItem.objects.get(workspace=workspace, content=content)
        assert (item.status, item.lifecycle_status, item.version) == ("deprecated", "deprecated", 2)
        head = MemoryVersion.objects.get(pk=item.current_version_id)
        assert (head.memory_id, head.version, head.operation) == (item.pk, 2, "modified")
        assert head.attributes["status"] == "deprecated"
        assert list(MemoryVersion.objects.filter(memory_id=item.pk).order_by("version")
                    .values_list("operation", "attributes__status")) == [("created", "active"),
                                                                         ("modified", "deprecated")]
        assert RecallEntry.objects.filter(memory_id=item.pk).exists()
    porto = MemoryItem.objects.get(workspace=workspace, content="Lives in Porto")
    assert (porto.status, porto.version) == ("active", 1)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="PostgreSQL chooses by its statistics")
def test_a_batchs_passages_are_deleted_through_the_messages_index(workspace):
    """The DELETE before a batch's passages are indexed finds them by their
    messages, not by reading every entry of the workspace (SQLite, without
    statistics on the table, took the workspace's index)."""
    from memories.recall.index import passage_entries_delete

    with CaptureQueriesContext(connection) as queries:
        passage_entries_delete(workspace_id=workspace.pk, message_ids=["msg_a", "msg_b"])
    (delete,) = [q["sql"] for q in queries]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {delete}")
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    assert "recall_message" in plan and "recall_ws" not in plan, plan


def test_the_passages_indexed_are_those_of_the_workspaces_messages(workspace, other_workspace):
    """A fork's read of its parent's passages already indexed answers the
    messages with passages in this workspace, through the message's index
    (on SQLite, as the DELETE: not every entry of the workspace)."""
    from memories.recall.index import passage_entries_rebuild, passages_indexed

    cid = "conv-indexed"
    messages = append_messages(workspace, cid, [{"role": "user", "content": f"I live in Berlin, note {n}."} for n in range(3)])
    conversation = Conversation.objects.get(workspace=workspace, external_id=cid)
    passage_entries_rebuild(workspace_id=workspace.pk, messages=messages[:2], conversation_id=conversation.pk)
    ids = [m.pk for m in messages]

    with CaptureQueriesContext(connection) as queries:
        assert passages_indexed(workspace_id=workspace.pk, message_ids=ids) == set(ids[:2])
    assert passages_indexed(workspace_id=other_workspace.pk, message_ids=ids) == set()
    assert passages_indexed(workspace_id=workspace.pk, message_ids=[]) == set()
    if connection.vendor == "sqlite":
        (read,) = [q["sql"] for q in queries]
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN QUERY PLAN {read}")
            plan = " ".join(str(row[-1]) for row in cursor.fetchall())
        assert "recall_message" in plan and "recall_ws" not in plan, plan


def test_the_locked_read_finds_what_one_orm_query_finds_value_for_value(workspace, other_workspace):
    """`_lock_live`, written by hand, reads the items one ORM query over the
    same condition reads, in the same (primary-key) order, every field's
    value as the ORM gives it: live facts of the keys in the fact scope, and
    the named loops still active; not other keys, scopes, types, statuses,
    lifecycles or workspaces."""
    actor = Actor.for_api_key("k")

    def item(type_: str, content: str, *, scope=Scope.USER, scope_id="u1", key=None, ws=workspace, **changes):
        made = memory_item_create(workspace=ws, actor=actor, scope=scope, scope_id=scope_id, type=type_,
                                  content=content, fact_key=key, importance=0.8)
        if changes:
            MemoryItem.objects.filter(pk=made.pk).update(**changes)
        return made

    for key in ("user.location", "user.diet"):
        item("fact", f"{key} now", key=key)
        item("fact", f"{key} pending", key=key, lifecycle_status=LifecycleStatus.PENDING)
        item("fact", f"{key} deprecated", key=key, status=Status.DEPRECATED)
        item("fact", f"{key} compacted", key=key, lifecycle_status=LifecycleStatus.COMPACTED)
        item("fact", f"{key} of u2", key=key, scope_id="u2")
        item("fact", f"{key} of the branch", key=key, scope=Scope.BRANCH, scope_id=SCOPE_ID)
        item("fact", f"{key} elsewhere", key=key, ws=other_workspace)
    item("fact", "another key", key="user.employer")
    open_loop = item("open_loop", "To do: renew passport")
    closed = item("open_loop", "To do: book hotel", status=Status.DEPRECATED)
    not_a_loop = item("fact", "named but a fact", key="user.age")
    foreign = item("open_loop", "To do: theirs", ws=other_workspace)
    keys, closing = ["user.diet", "user.location"], [open_loop.pk, closed.pk, not_a_loop.pk, foreign.pk]

    with transaction.atomic(), CaptureQueriesContext(connection) as read:
        got = writes._lock_live(workspace_id=workspace.pk, destination=destination_for(
            scope="branch", scope_id=SCOPE_ID, user_id="u1"), keys=keys, closing=closing)
    # One statement; on PostgreSQL it locks the rows it reads.
    assert len(read) == 1
    assert read[0]["sql"].endswith(" FOR UPDATE") == connection.features.has_select_for_update
    expected = list(MemoryItem.objects.filter(
        Q(scope=Scope.USER, scope_id="u1", type=MemoryType.FACT, status=Status.ACTIVE,
          lifecycle_status__in=writes.LIVE_LIFECYCLES, fact_key__in=keys)
        | Q(pk__in=closing, type=MemoryType.OPEN_LOOP, status=Status.ACTIVE), workspace=workspace).order_by("pk"))
    assert len(expected) == 5 and open_loop.pk in {e.pk for e in expected}
    assert [g.pk for g in got] == [e.pk for e in expected]
    for read, orm in zip(got, expected, strict=True):
        assert read._state.adding is False and read._state.db == orm._state.db
        for field in MemoryItem._meta.concrete_fields:
            assert getattr(read, field.attname) == getattr(orm, field.attname), field.name


def _extract(workspace, fixture: dict, cid: str) -> dict:
    append_messages(workspace, cid, fixture["messages"])
    job, _ = memory_job_enqueue(workspace=workspace, kind=JobKind.EXTRACT, scope="branch",
                                scope_id=branch_scope_id(cid, "main"))
    memory_job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    items = MemoryItem.objects.filter(workspace=workspace)
    state = ScopeState.objects.get(workspace=workspace, scope="branch", scope_id=branch_scope_id(cid, "main"))
    conversation = Conversation.objects.get(workspace=workspace, external_id=cid)
    assert state.rolling_summary and conversation.metadata["summary"] == state.rolling_summary
    return {
        "items": sorted((i.type, i.content, i.status, i.version, i.coverage_start_floor_no or 0, len(i.sources))
                        for i in items),
        "edges": sorted((e.from_item.content, e.to_item.content, e.relation)
                        for e in MemoryEdge.objects.filter(workspace=workspace).select_related("from_item", "to_item")),
        "versions": MemoryVersion.objects.filter(workspace=workspace).count(),
        "passages": RecallEntry.objects.filter(workspace=workspace, kind="passage").count(),
        "counts": {k: v for k, v in job.result.items() if k != "last_processed_floor_no"},
        "rolling": state.rolling_summary,
        "floor": state.last_processed_floor_no,
    }


@pytest.mark.parametrize("name", ["en_travel_planning", "zh_work_assistant"])
def test_batches_several_to_a_commit_make_the_same_memories(workspace, other_workspace, monkeypatch, name):
    fixture = load_fixture(name)
    with override_settings(MEMORY_EXTRACT_BATCH_FLOORS=4):
        grouped = _extract(workspace, fixture, "conv-grouped")
        monkeypatch.setattr(extract_module, "IN_PROCESS_FLOORS_PER_COMMIT", 4)  # one batch to a commit
        monkeypatch.setattr(extract_module, "IN_PROCESS_FLOORS_PER_COMMIT_POSTGRESQL", 4)
        single = _extract(other_workspace, fixture, "conv-single")
    assert grouped["counts"]["batches"] > 1 and grouped["items"]
    assert grouped == single


# One turn a batch: two facts in one, values replaced, loops opened and
# closed, so the lists carried between batches gain and lose entries, full
# and not (a closed loop makes room for an older one).
CARRIED_TURNS = [
    "I live in Berlin. I am vegetarian.",
    "Please remind me to renew my passport before June.",
    "Please remind me to book the hotel before Friday.",
    "My budget is 400 dollars.",
    "I booked the hotel.",
    "I moved to Lisbon, I live in Lisbon now.",
    "I renewed my passport.",
    "My budget is 900 dollars.",
    "I live in Porto.",
]


@pytest.mark.parametrize(("facts_limit", "loops_limit"), [(2, 1), (200, 100)])
def test_each_batch_is_shown_the_facts_and_loops_a_read_of_the_database_gives(
    workspace, monkeypatch, facts_limit, loops_limit
):
    """Within a commit the known facts and open loops are carried from batch
    to batch, not read again: what each batch is shown equals a fresh read,
    with lists that fill up and lose entries (small limits) and without."""
    monkeypatch.setattr(extract_module, "KNOWN_FACTS_LIMIT", facts_limit)
    monkeypatch.setattr(extract_module, "OPEN_LOOPS_LIMIT", loops_limit)
    live = extract_module._LiveMemory
    shown = {"carried": 0, "read": 0, "facts": 0, "loops": 0}

    def checked(method, statement):
        def shows(self):
            carried = getattr(self, f"_{method.__name__}") is not None
            rows = method(self)
            assert rows == self._read(getattr(self, statement))
            shown["carried" if carried else "read"] += 1
            shown[method.__name__] += len(rows)
            return rows
        return shows

    monkeypatch.setattr(live, "facts", checked(live.facts, "_facts_read"))
    monkeypatch.setattr(live, "loops", checked(live.loops, "_loops_read"))
    messages = [{"role": "user", "content": text} for text in CARRIED_TURNS]
    with override_settings(MEMORY_EXTRACT_BATCH_FLOORS=1):
        result = _extract(workspace, {"messages": messages}, "conv-carried")
    assert (result["counts"]["facts_updated"], result["counts"]["resolved"]) == (3, 2)
    assert shown["carried"] > shown["read"] > 0 and shown["facts"] and shown["loops"]


def test_a_forks_extraction_indexes_each_message_once_with_its_own_branch(workspace):
    """A fork's extraction reads its parent's floors too: those not indexed
    yet are indexed with the parent's branch, in the conversation, and the
    parent's own extraction later leaves one passage per message."""
    from conversations.services import branch_create

    cid = "conv-fork-passages"
    main = append_messages(workspace, cid, [{"role": "user", "content": f"I live in Berlin, note {n}."} for n in range(4)])
    branch_create(workspace=workspace, external_id=cid, name="alt", from_message_id=main[-1].pk)
    alt = append_messages(workspace, cid, [{"role": "user", "content": f"I moved to Lisbon, note {n}."} for n in range(2)],
                     branch="alt")
    conversation = Conversation.objects.get(workspace=workspace, external_id=cid)

    def passages():
        return sorted(RecallEntry.objects.filter(workspace=workspace, kind="passage")
                      .values_list("message_id", "branch_id", "conversation_id", "floor_no"))

    for branch in ("alt", "main"):
        job, _ = memory_job_enqueue(workspace=workspace, kind=JobKind.EXTRACT, scope="branch",
                                    scope_id=branch_scope_id(cid, branch))
        memory_job_execute(job_id=job.pk)
        job.refresh_from_db()
        assert job.status == "succeeded", job.error
        assert passages() == sorted((m.pk, m.branch_id, conversation.pk, m.floor_no) for m in [*main, *alt])
