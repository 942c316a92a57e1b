"""Extraction with a network model (the scripted one behind a mock HTTP
transport): the same memories as the offline extractor, for prompts that
carry only what a batch could touch, in batches sized by tokens."""

from __future__ import annotations

import pytest
from django.test import override_settings

from accounts.actors import Actor
from memories.models import JobKind, MemoryItem, MemoryJob
from memories.services.items import memory_item_create
from memories.services.jobs import memory_job_enqueue
from memories.services.scopes import branch_scope_id, extraction_due_after
from tests.factories import append_messages
from tests.memories.pipeline_helpers import ScriptedModel, eager_celery, load_fixture

pytestmark = pytest.mark.django_db(transaction=False)


@pytest.fixture
def model(monkeypatch):
    scripted = ScriptedModel()
    monkeypatch.setattr("memories.services.pipeline.extract.get_provider", scripted.provider)
    return scripted


def _extract(workspace, cid: str) -> MemoryJob:
    memory_job_enqueue(workspace=workspace, kind=JobKind.EXTRACT, scope="branch", scope_id=branch_scope_id(cid, "main"))
    return MemoryJob.objects.filter(workspace=workspace, kind=JobKind.EXTRACT).latest("created_at")


def test_a_network_model_waits_for_tokens_not_floors(settings):
    settings.LLM_PROVIDER = "openai"
    settings.MEMORY_EXTRACT_MIN_FLOORS, settings.MEMORY_EXTRACT_MIN_TOKENS = 6, 1500
    assert not extraction_due_after(floors_before=5, floors_after=6, tokens_before=90, tokens_after=100)
    assert extraction_due_after(floors_before=40, floors_after=41, tokens_before=1490, tokens_after=1510)
    settings.LLM_PROVIDER = "offline"
    assert extraction_due_after(floors_before=5, floors_after=6, tokens_before=90, tokens_after=100)


@pytest.mark.parametrize("name", ["en_travel_planning", "zh_work_assistant"])
def test_the_network_path_extracts_what_the_offline_one_does(workspace, django_capture_on_commit_callbacks, model,
                                                             settings, name):
    settings.LLM_PROVIDER = "openai"
    fixture = load_fixture(name)
    cid = f"net-{name}"
    # Batches of 8 floors, as the offline pipeline test reads them.
    with eager_celery(), override_settings(MEMORY_EXTRACT_BATCH_FLOORS=8), \
            django_capture_on_commit_callbacks(execute=True):
        append_messages(workspace, cid, fixture["messages"])
        job = _extract(workspace, cid)
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    expected = fixture["expected"]
    items = MemoryItem.objects.filter(workspace=workspace, scope="branch", scope_id=branch_scope_id(cid, "main"))
    active = {i.fact_key: i for i in items.filter(type="fact", status="active")}
    for key, value in expected["facts"].items():
        assert key in active and value in active[key].content, (key, sorted(active))
    for key, old, new in expected["updates"]:
        assert items.get(type="fact", fact_key=key, content__contains=old).status == "deprecated"
        assert items.get(type="fact", fact_key=key, content__contains=new).status == "active"
    for text in expected["resolved"]:
        assert items.get(type="open_loop", content__contains=text).status == "deprecated"
    for text in expected["open"]:
        assert items.filter(type="open_loop", status="active", content__contains=text).exists()
    # What the model was paid, on the job: every call, the cached prefix after the first.
    assert job.result["llm_calls"] == len(model.requests)
    assert job.result["cached_input_tokens"] > 0 and job.input_tokens > job.result["cached_input_tokens"]
    # One system prompt for every call: the prefix a provider caches.
    assert len({r["messages"][0]["content"] for r in model.requests}) == 1


def test_a_prompt_carries_the_facts_its_turns_touch_not_all_of_them(workspace, django_capture_on_commit_callbacks,
                                                                    model, settings):
    settings.LLM_PROVIDER = "openai"
    scope_id = branch_scope_id("cost", "main")
    things = [("colour", "Dana's favourite colour is teal"), ("dentist", "Dana's dentist is Dr Alvarez"),
              ("car", "Dana drives a blue Volvo"), ("gym", "Dana trains at Iron Temple"),
              ("bank", "Dana banks with Nordbank"), ("street", "Dana lives on Elm Road"),
              ("cat", "Dana's cat is called Pixel"), ("band", "Dana plays bass in Low Tide"),
              ("barber", "Dana's barber is Sal"), ("team", "Dana supports the Hawks")]
    for key, content in things:
        memory_item_create(workspace=workspace, actor=Actor.system(), scope="branch", scope_id=scope_id,
                           type="fact", fact_key=f"user.{key}", content=content)
    filler = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"Small update number {i} on the move."}
              for i in range(20)]
    with eager_celery(), override_settings(MEMORY_EXTRACT_BATCH_FLOORS=50), \
            django_capture_on_commit_callbacks(execute=True):
        append_messages(workspace, "cost", [*filler, {"role": "user", "content": "The Volvo needs new tyres."}])
        _extract(workspace, "cost")
    user = model.requests[-1]["messages"][1]["content"]
    shown = user.split("Known facts:\n", 1)[1].split("\nOpen tasks:", 1)[0].splitlines()
    # The car is touched; the newest few ride along (a correction is most
    # often of what was said last); the rest stay out.
    assert any("Volvo" in line for line in shown)
    assert len(shown) < len(things), user


def test_a_job_leaves_a_tail_appended_while_it_ran_to_the_next_one(workspace, django_capture_on_commit_callbacks,
                                                                   model, settings):
    """Turns appended while a job runs (an agent still talking), less than a
    threshold's worth, are left to the next job: a call for a few turns costs
    the whole prompt again. Turns there when it started are all read."""
    from memories.models import ScopeState

    settings.LLM_PROVIDER = "openai"
    messages = [{"role": "user", "content": f"Note {i}: the blue van parks on level {i} today."} for i in range(6)]
    late = iter([{"role": "user", "content": "Also the red car moved."}])
    model.on_request = lambda: append_messages(workspace, "tail", [next(late)]) if len(model.requests) == 1 else None
    with eager_celery(), override_settings(MEMORY_EXTRACT_BATCH_TOKENS=30, MEMORY_EXTRACT_MIN_TOKENS=1000), \
            django_capture_on_commit_callbacks(execute=True):
        append_messages(workspace, "tail", messages)
        _extract(workspace, "tail")
    state = ScopeState.objects.get(workspace=workspace, scope_id=branch_scope_id("tail", "main"))
    assert len(model.requests) > 1 and state.last_processed_floor_no == 6
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        memory_job_enqueue(workspace=workspace, kind=JobKind.REBUILD, scope="branch",
                           scope_id=branch_scope_id("tail", "main"))
    state.refresh_from_db()
    assert state.last_processed_floor_no == 7
