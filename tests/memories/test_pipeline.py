"""The pipeline end to end, in-process: appends -> extraction job -> memories,
edges, summaries and scope state; compaction; rebuild; review; idempotency."""

from __future__ import annotations

import pytest
from django.test import override_settings

from memories.models import JobStatus, MemoryEdge, MemoryItem, MemoryJob, MemoryVersion, ScopeState
from memories.services.jobs import memory_job_enqueue
from memories.services.pipeline.execute import memory_job_execute
from memories.services.scopes import branch_scope_id
from tests.factories import append_messages
from tests.memories.pipeline_helpers import eager_celery, load_fixture

pytestmark = pytest.mark.django_db(transaction=False)


def _run_conversation(workspace, django_capture_on_commit_callbacks, name: str, cid: str):
    fixture = load_fixture(name)
    with eager_celery(), override_settings(MEMORY_EXTRACT_MIN_FLOORS=6, MEMORY_EXTRACT_BATCH_FLOORS=8), \
            django_capture_on_commit_callbacks(execute=True):
        append_messages(workspace, cid, fixture["messages"])
    return fixture, branch_scope_id(cid, "main")


@pytest.mark.parametrize("name", ["en_travel_planning", "zh_work_assistant"])
def test_appends_extract_facts_updates_loops_and_summary(workspace, django_capture_on_commit_callbacks, name):
    fixture, scope_id = _run_conversation(workspace, django_capture_on_commit_callbacks, name, f"conv-{name}")
    expected = fixture["expected"]
    items = MemoryItem.objects.filter(workspace=workspace, scope="branch", scope_id=scope_id)

    active_facts = {i.fact_key: i for i in items.filter(type="fact", status="active")}
    for key, value in expected["facts"].items():
        assert key in active_facts, f"missing fact {key}: {sorted(active_facts)}"
        assert value in active_facts[key].content
    for key, old, new in expected["updates"]:
        old_item = items.get(type="fact", fact_key=key, content__contains=old)
        new_item = items.get(type="fact", fact_key=key, content__contains=new)
        assert old_item.status == "deprecated" and new_item.status == "active"
        assert MemoryEdge.objects.filter(from_item=new_item, to_item=old_item, relation="updates").exists()
    for text in expected["resolved"]:
        loop = items.get(type="open_loop", content__contains=text)
        assert loop.status == "deprecated"
        assert MemoryEdge.objects.filter(to_item=loop, relation="resolves", from_item__summary_tier="micro").exists()
    for text in expected["open"]:
        assert items.filter(type="open_loop", status="active", content__contains=text).exists()

    micros = list(items.filter(type="summary", summary_tier="micro").order_by("coverage_start_floor_no"))
    assert micros and micros[0].coverage_start_floor_no == 1
    for a, b in zip(micros, micros[1:], strict=False):
        assert b.coverage_start_floor_no == a.coverage_end_floor_no + 1
    for micro in micros:
        assert len(micro.content) <= 500 and micro.source_job_id and micro.derived_from_count
        assert micro.token_count_estimate > 0
    # Every fact and loop points at the summary of its batch.
    for item in items.filter(type__in=["fact", "open_loop"]):
        assert MemoryEdge.objects.filter(from_item=item, relation="derived_from", to_item__summary_tier="micro").exists()
    # Every change wrote a version, by the job.
    assert MemoryVersion.objects.filter(memory_id__in=items.values("pk")).exclude(actor_type="job").count() == 0
    assert MemoryVersion.objects.filter(memory_id__in=items.values("pk"), operation="modified").exists()

    state = ScopeState.objects.get(workspace=workspace, scope="branch", scope_id=scope_id)
    conversation = state.conversation
    assert state.last_processed_floor_no == len(fixture["messages"]) or state.pending_floors > 0
    summary = conversation.metadata["summary"]
    assert len(summary) <= 500
    for text in expected["summary_contains"]:
        assert text in summary
    for text in expected["summary_excludes"]:
        assert text not in summary
    assert conversation.metadata["summarized_until"].startswith("msg_")
    job = MemoryJob.objects.filter(workspace=workspace, kind="extract", status="succeeded").first()
    assert job.provider == "offline" and job.input_tokens > 0 and job.output_tokens > 0


def test_rerunning_a_job_writes_nothing_twice(workspace, django_capture_on_commit_callbacks):
    _, scope_id = _run_conversation(workspace, django_capture_on_commit_callbacks, "en_travel_planning", "c1")
    before = (MemoryItem.objects.count(), MemoryEdge.objects.count(), MemoryVersion.objects.count())
    job = MemoryJob.objects.filter(kind="extract").order_by("created_at").first()
    # Force the same job to run again as a redelivery would.
    MemoryJob.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING)
    memory_job_execute(job_id=job.pk)
    assert (MemoryItem.objects.count(), MemoryEdge.objects.count(), MemoryVersion.objects.count()) == before
    job, _ = memory_job_enqueue(workspace=workspace, kind="extract", scope="branch", scope_id=scope_id)
    memory_job_execute(job_id=job.pk)
    assert MemoryItem.objects.count() == before[0]


def test_compaction_merges_micros_into_a_macro(workspace, django_capture_on_commit_callbacks):
    with override_settings(MEMORY_EXTRACT_BATCH_FLOORS=4):
        _, scope_id = _run_conversation(workspace, django_capture_on_commit_callbacks, "zh_work_assistant", "c2")
    micros = list(MemoryItem.objects.filter(scope_id=scope_id, summary_tier="micro"))
    assert len(micros) >= 3
    job, _ = memory_job_enqueue(workspace=workspace, kind="compact", scope="branch", scope_id=scope_id,
                                payload={"force": True})
    memory_job_execute(job_id=job.pk)
    macro = MemoryItem.objects.get(scope_id=scope_id, summary_tier="macro")
    assert len(macro.content) <= 500 and "上海" in macro.content
    assert macro.coverage_start_floor_no == 1
    assert macro.derived_from_count == len(micros)
    assert set(MemoryEdge.objects.filter(from_item=macro, relation="compacts").values_list("to_item_id", flat=True)) == {m.pk for m in micros}
    assert not MemoryItem.objects.filter(scope_id=scope_id, summary_tier="micro", lifecycle_status="active").exists()
    assert ScopeState.objects.get(scope_id=scope_id).micro_count == 0
    # A second compaction has nothing left to merge.
    job, _ = memory_job_enqueue(workspace=workspace, kind="compact", scope="branch", scope_id=scope_id)
    memory_job_execute(job_id=job.pk)
    assert MemoryItem.objects.filter(scope_id=scope_id, summary_tier="macro").count() == 1


def test_rebuild_rederives_without_duplicates_and_keeps_operator_items(workspace, django_capture_on_commit_callbacks):
    from accounts.actors import Actor
    from memories.services.items import memory_item_create

    _, scope_id = _run_conversation(workspace, django_capture_on_commit_callbacks, "en_travel_planning", "c3")
    operator = memory_item_create(workspace=workspace, actor=Actor.for_api_key("k"), scope="branch", scope_id=scope_id,
                                  type="fact", content="Prefers window seats", fact_key="user.preference.seat")
    def shape():
        return sorted(MemoryItem.objects.filter(scope_id=scope_id, type__in=["fact", "open_loop"])
                      .exclude(pk=operator.pk).values_list("type", "fact_key", "content", "status"))

    before = shape()
    machine_count = MemoryItem.objects.filter(scope_id=scope_id).exclude(pk=operator.pk).count()
    job, _ = memory_job_enqueue(workspace=workspace, kind="rebuild", scope="branch", scope_id=scope_id)
    memory_job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "succeeded" and job.result["removed"] == machine_count
    # The same facts and loops (batch boundaries may differ, the knowledge does not).
    assert shape() == before
    micros = list(MemoryItem.objects.filter(scope_id=scope_id, summary_tier="micro").order_by("coverage_start_floor_no"))
    assert micros[0].coverage_start_floor_no == 1
    for a, b in zip(micros, micros[1:], strict=False):
        assert b.coverage_start_floor_no == a.coverage_end_floor_no + 1  # no overlap: nothing twice
    assert MemoryItem.objects.filter(pk=operator.pk).exists()


def test_review_workspace_extracts_pending_memories(workspace, django_capture_on_commit_callbacks):
    workspace.requires_review = True
    workspace.save(update_fields=["requires_review"])
    _, scope_id = _run_conversation(workspace, django_capture_on_commit_callbacks, "en_travel_planning", "c4")
    items = MemoryItem.objects.filter(scope_id=scope_id, status="active")
    assert items.exists()
    assert set(items.values_list("lifecycle_status", flat=True)) == {"pending"}


def test_extraction_waits_for_the_threshold(workspace, django_capture_on_commit_callbacks):
    with eager_celery(), override_settings(MEMORY_EXTRACT_MIN_FLOORS=5, MEMORY_EXTRACT_MIN_TOKENS=100000):
        with django_capture_on_commit_callbacks(execute=True):
            append_messages(workspace, "c5", [{"role": "user", "content": f"I need to call the bank about card {i}."} for i in range(4)])
        assert not MemoryJob.objects.exists()
        state = ScopeState.objects.with_pending().get(scope_id=branch_scope_id("c5", "main"))
        assert state.dirty and state.pending_floors == 4
        with django_capture_on_commit_callbacks(execute=True):
            append_messages(workspace, "c5", [{"role": "user", "content": "I live in Lisbon."}])
    job = MemoryJob.objects.get(kind="extract")
    assert job.status == "succeeded" and job.result["floors"] == 5
    state = ScopeState.objects.with_pending().get(pk=state.pk)
    assert not state.dirty and state.pending_floors == 0 and state.last_processed_floor_no == 5


def test_a_branchs_first_append_makes_its_scope_state_in_one_statement(
    workspace, django_capture_on_commit_callbacks, django_assert_num_queries
):
    scope_id = branch_scope_id("c6", "main")
    # Left without a branch: its conversation was deleted and made again under the same id.
    orphan = ScopeState.objects.create(workspace=workspace, scope="branch", scope_id=scope_id)
    with override_settings(MEMORY_EXTRACT_MIN_FLOORS=50, MEMORY_EXTRACT_MIN_TOKENS=100000):
        with django_capture_on_commit_callbacks() as callbacks:
            append_messages(workspace, "c6", [{"role": "user", "content": "I need to call the bank."}])
        # Two statements after the commit: the message's passages into the
        # recall index (searchable at once), and the scope state's one upsert.
        with django_assert_num_queries(2) as captured:
            for callback in callbacks:
                callback()
    statements = [query["sql"] for query in captured.captured_queries]
    assert sum('INTO "memories_scopestate"' in sql for sql in statements) == 1
    assert sum('INTO "memories_recallentry"' in sql for sql in statements) == 1
    orphan.refresh_from_db()
    assert orphan.branch.name == "main" and orphan.conversation.external_id == "c6"
    assert ScopeState.objects.filter(scope_id=scope_id).count() == 1
    assert ScopeState.objects.with_pending().get(pk=orphan.pk).pending_floors == 1


# Committed for real: the receiver runs after the append's commit, outside a
# transaction, where the branch's deferred foreign key is checked at once.
@pytest.mark.django_db(transaction=True)
def test_a_first_append_announced_after_its_branch_was_deleted_makes_no_scope_state(workspace):
    from conversations.hooks import BranchRef, MessagesAppended
    from conversations.services import conversation_get_or_create
    from memories.services.scopes import scope_note_appended

    conversation, _ = conversation_get_or_create(workspace=workspace, external_id="c7")
    event = MessagesAppended(
        workspace_id=workspace.pk, conversation_id=conversation.pk, external_id="c7",
        branch=BranchRef(id="br_deleted_meanwhile", name="side"), message_ids=("msg_1",), first_floor_no=1,
        last_floor_no=1, tokens=5, pending_floors=1, pending_tokens=5, opens_branch=True,
    )
    scope_note_appended(event=event)  # the insert fails on the branch's foreign key, quietly
    assert not ScopeState.objects.filter(scope_id=branch_scope_id("c7", "side")).exists()
