"""Extraction through the real pipeline (appends -> extract jobs -> items,
edges, rolling summary -> compaction): what a new user's travel chat and a
chat between two friends leave in memory, and from which messages."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings

from memories.models import MemoryEdge, MemoryItem
from memories.services.jobs import memory_job_enqueue
from memories.services.pipeline.execute import memory_job_execute
from memories.services.scopes import branch_scope_id
from tests.factories import append_messages
from tests.memories.pipeline_helpers import eager_celery, load_fixture

pytestmark = pytest.mark.django_db(transaction=False)


def _ingest(workspace, django_capture_on_commit_callbacks, name: str, cid: str):
    fixture = load_fixture(name)
    with eager_celery(), override_settings(MEMORY_EXTRACT_MIN_FLOORS=6, MEMORY_EXTRACT_BATCH_FLOORS=8), \
            django_capture_on_commit_callbacks(execute=True):
        messages = append_messages(workspace, cid, fixture["messages"])
    scope_id = branch_scope_id(cid, "main")
    return {m.floor_no: m.pk for m in messages}, scope_id


def test_new_user_travel_chat(workspace, django_capture_on_commit_callbacks):
    floors, scope_id = _ingest(workspace, django_capture_on_commit_callbacks, "en_new_user_travel", "travel")
    items = MemoryItem.objects.filter(workspace=workspace, scope_id=scope_id)
    active = {i.fact_key: i for i in items.filter(type="fact", status="active")}
    assert active["user.name"].content == "User's name is Maya"
    assert active["person.sam.allergy.peanuts"].content == "User's partner Sam is allergic to peanuts"
    assert active["person.sam.allergy.peanuts"].importance >= 0.85
    assert active["user.email"].content == "User's email is maya@example.com"
    assert active["user.phone"].content == "User's phone number is +1 617 555 0142"
    # The corrections replaced the old values, linked by `updates`.
    for key, old, new in (("user.preference.seat", "window seats", "aisle seats"), ("user.budget", "$3,000", "$4,000")):
        old_item = items.get(type="fact", fact_key=key, content__contains=old)
        assert old_item.status == "deprecated"
        assert new in active[key].content
        assert MemoryEdge.objects.filter(from_item=active[key], to_item=old_item, relation="updates").exists()
    # Every fact is sourced from the message that said it.
    assert active["user.preference.seat"].sources == [floors[37]]
    assert active["person.sam.allergy.peanuts"].sources == [floors[9]]
    loops = sorted(items.filter(type="open_loop", status="active").values_list("content", flat=True))
    assert [re.sub(r" \(due \d{4}-\d\d-\d\d\)$", "", loop) for loop in loops] == [
        "To do: book Casa do Barao by Friday", "To do: buy the Pena Palace tickets before June 3"]
    assert all(re.search(r"\(due \d{4}-\d\d-\d\d\)$", loop) for loop in loops)
    # The due day is a field of the loop too, the day its text names.
    for loop in items.filter(type="open_loop", status="active"):
        assert loop.due_date.isoformat() == re.search(r"\(due (\d{4}-\d\d-\d\d)\)$", loop.content).group(1)
    # No chatter became a fact.
    assert not items.filter(type="fact", content__icontains="thank").exists()
    micros = list(items.filter(type="summary", summary_tier="micro").order_by("coverage_start_floor_no"))
    for micro in micros:
        assert "Thanks!" not in micro.content and "example. com" not in micro.content
        covered = {floors[n] for n in range(micro.coverage_start_floor_no, micro.coverage_end_floor_no + 1)}
        assert micro.sources and set(micro.sources) <= covered
        assert micro.sources != [floors[micro.coverage_end_floor_no]] or len(covered) == 1
    job, _ = memory_job_enqueue(workspace=workspace, kind="compact", scope="branch", scope_id=scope_id,
                                payload={"force": True})
    memory_job_execute(job_id=job.pk)
    macro = MemoryItem.objects.get(scope_id=scope_id, summary_tier="macro")
    assert len(macro.content) <= 500 and "example. com" not in macro.content
    assert "allergic to peanuts" in macro.content


def test_two_friends_through_a_chat_client(workspace, django_capture_on_commit_callbacks):
    floors, scope_id = _ingest(workspace, django_capture_on_commit_callbacks, "en_two_friends", "friends")
    items = MemoryItem.objects.filter(workspace=workspace, scope_id=scope_id)
    active = {i.fact_key: i for i in items.filter(type="fact", status="active")}
    # Joanna writes as the "assistant" role: her facts count as much as Nate's.
    assert active["person.tom.allergy.peanuts"].sources == [floors[14]]
    assert active["person.joanna.sister.location"].content == "Joanna's sister lives in Denver"
    assert active["person.nate.allergy.cats"].content == "Nate is allergic to cats"
    micros = " ".join(items.filter(type="summary", summary_tier="micro").values_list("content", flat=True))
    assert "Nate: " in micros and "Joanna: " in micros
    assert "I won my first video game tournament last week" in micros
    assert "[7:" not in micros and "Assistant:" not in micros and "User:" not in micros
