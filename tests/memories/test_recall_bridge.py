"""Recall across a vocabulary gap: evidence that shares no word with the
question is found through the turn that links them (pseudo-relevance
feedback over the first pass, `ranking._expansion`)."""

from __future__ import annotations

import random

import pytest

from conversations.services import message_append

pytestmark = pytest.mark.django_db

TOPICS = ["gardening", "football", "recipes", "weather", "traffic", "podcasts", "laptops", "museums", "bicycles",
          "coffee", "movies", "painting", "hiking", "groceries", "concerts", "trains", "printers", "fishing"]
VERBS = ["talked about", "complained about", "read about", "argued over", "laughed at", "worried about"]


def _chatter(n: int) -> list[str]:
    rng = random.Random(7)
    return [f"Yesterday we {rng.choice(VERBS)} {rng.choice(TOPICS)} and {rng.choice(TOPICS)} for a while "
            f"(note {i})." for i in range(n)]


@pytest.fixture
def linked_conversation(workspace, django_capture_on_commit_callbacks):
    lines = _chatter(70)
    lines.insert(20, "My aunt Anjali sent me the funniest meme this morning, I'm still laughing.")
    lines.insert(55, "Anjali keeps sending pictures from Auckland, the new place looks gorgeous.")
    messages = []
    with django_capture_on_commit_callbacks(execute=True):  # passages are indexed after each append commits
        for n, text in enumerate(lines):
            messages.append(message_append(workspace=workspace, external_id="family", role="user",
                                           content=f"Owen: {text}" if n % 2 == 0 else f"Rosa: {text}").message)
    return {m.content.split(": ", 1)[1]: m.pk for m in messages}


def _injected_messages(api, query: str) -> set[str]:
    # A budget that holds every relevant passage: what is asked is whether the
    # answer counts as relevant at all, not where it ranks.
    response = api.post("/v1/conversations/family/context",
                        {"query": query, "max_messages": 0, "memory_token_budget": 4000}, format="json")
    assert response.status_code == 200, response.content
    return {entry["source_message_id"] for entry in response.json()["data"]["memory"]["injected"]
            if entry.get("source_message_id")}


def test_evidence_sharing_no_word_with_the_question_is_found_through_the_linking_turn(api, linked_conversation):
    link = linked_conversation["My aunt Anjali sent me the funniest meme this morning, I'm still laughing."]
    answer = linked_conversation["Anjali keeps sending pictures from Auckland, the new place looks gorgeous."]
    found = _injected_messages(api, "Which city is Owen's aunt based in now?")
    assert link in found and answer in found


def test_without_the_second_pass_the_answer_is_not_found(api, linked_conversation, settings):
    settings.RECALL_EXPANSION_WEIGHT = 0
    answer = linked_conversation["Anjali keeps sending pictures from Auckland, the new place looks gorgeous."]
    assert answer not in _injected_messages(api, "Which city is Owen's aunt based in now?")


def test_a_small_scope_is_not_expanded(api, workspace, django_capture_on_commit_callbacks):
    # Three entries: every word is common in so few, so nothing links them.
    with django_capture_on_commit_callbacks(execute=True):
        for text in ("The user drives a red bicycle", "The user enjoys jazz", "The user owns a cat"):
            message_append(workspace=workspace, external_id="family", role="user", content=text)
    response = api.post("/v1/conversations/family/context",
                        {"query": "what colour is the bicycle?", "max_messages": 0}, format="json")
    injected = response.json()["data"]["memory"]["injected"]
    assert len(injected) == 1 and injected[0]["reason"] == "relevant"

