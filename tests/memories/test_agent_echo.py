"""An agent that stores what the service gave it: its /context block sent
back as a user turn, a recalled memory quoted, the model restating a fact.
None of it becomes a new memory."""

from __future__ import annotations

import pytest
from django.test import override_settings

from memories.extraction.dialog import prepare_turns
from memories.extraction.extractor import extract
from memories.extraction.types import ExtractionInput, Turn
from memories.models import MemoryItem
from tests.memories.pipeline_helpers import eager_celery

pytestmark = pytest.mark.django_db


def _facts(workspace) -> list[tuple[str, str]]:
    return sorted(MemoryItem.objects.filter(workspace=workspace, type__in=["fact", "open_loop"], status="active")
                  .values_list("fact_key", "content"))


def _say(api, cid: str, role: str, content: str) -> None:
    response = api.post(f"/v1/conversations/{cid}/messages", {"role": role, "content": content}, format="json")
    assert response.status_code == 201, response.content


def test_an_agent_loop_that_appends_its_own_context_and_restatements_creates_no_memory(
        api, workspace, django_capture_on_commit_callbacks):
    with eager_celery(), override_settings(MEMORY_EXTRACT_MIN_FLOORS=2, MEMORY_EXTRACT_BATCH_FLOORS=50), \
            django_capture_on_commit_callbacks(execute=True):
        api.post("/v1/conversations", {"conversation_id": "agent", "user_id": "maya"}, format="json")
        _say(api, "agent", "user", "Hi, my name is Maya. I'm allergic to peanuts and I live in Lisbon.")
        _say(api, "agent", "assistant", "Nice to meet you, Maya. Noted.")
    before = _facts(workspace)
    assert any("peanuts" in content for _, content in before) and any("Lisbon" in c for _, c in before)

    for question in ("What should I cook tonight?", "Any idea for a weekend trip?"):
        with eager_celery(), override_settings(MEMORY_EXTRACT_MIN_FLOORS=2, MEMORY_EXTRACT_BATCH_FLOORS=50), \
                django_capture_on_commit_callbacks(execute=True):
            context = api.post("/v1/conversations/agent/context",
                               {"query": "peanuts allergy Lisbon", "max_messages": 1, "system": "You are a cook."},
                               format="json").json()["data"]
            assert "## Relevant memories" in context["system"] and "peanuts" in context["system"]
            # The agent stores the prompt it sent as the user's turn, then the model's answer.
            _say(api, "agent", "user", f"{context['system']}\n\n{question}")
            recalled = next(e["content"] for e in context["memory"]["injected"] if "peanuts" in e.get("content", ""))
            _say(api, "agent", "assistant",
                 f"As you told me, you're allergic to peanuts, so I'd skip the satay. Your profile says:\n"
                 f"- [fact, about this user] {recalled}\nTry a lemon risotto.")
    assert _facts(workspace) == before
    texts = " ".join(MemoryItem.objects.filter(workspace=workspace, type="summary").values_list("content", flat=True))
    assert "## Relevant memories" not in texts and "[fact" not in texts


def test_a_fact_restated_in_a_dialog_of_two_people_is_not_stated_again():
    turns = [Turn(floor_no=1, message_id="m1", role="user", text="[7:31 pm] Nate: I'm allergic to peanuts."),
             Turn(floor_no=2, message_id="m2", role="assistant",
                  text="[7:32 pm] Joanna: As you told me, you're allergic to peanuts. I moved to Denver last week.")]
    prepared = prepare_turns(turns)
    assert prepared[1].text == "I moved to Denver last week."
    result = extract(ExtractionInput(previous_summary="", known_facts=[], open_loops=[], turns=turns))
    assert [f.message_id for f in result.facts if "peanuts" in f.content] == ["m1"]


def test_a_context_block_sent_back_as_a_user_turn_states_no_fact():
    block = ("You are a cook.\n\n## Conversation summary\nFacts: User is allergic to peanuts; User lives in Lisbon.\n\n"
             "## Relevant memories\n- [fact, about this user] User is allergic to peanuts\n"
             "- [summary of floors 1-2] User: lives in Lisbon.\n\nWhat should I cook tonight?")
    turns = [Turn(floor_no=3, message_id="m3", role="user", text=block)]
    assert prepare_turns(turns)[0].text == "You are a cook.\n\n\n\nWhat should I cook tonight?"
    assert extract(ExtractionInput(previous_summary="", known_facts=[], open_loops=[], turns=turns)).facts == []
