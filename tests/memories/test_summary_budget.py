"""The rolling summary is memory: it counts inside `memory_token_budget` (at
most `SUMMARY_BUDGET_SHARE` of it beside selected memories) and does not
repeat what the memories injected beside it say."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings

from conversations.services import message_append
from memories.llm.tokens import count_tokens
from memories.recall.context import LABELS, SUMMARY_BUDGET_SHARE
from tests.memories.pipeline_helpers import eager_celery, load_fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def travel(workspace, django_capture_on_commit_callbacks):
    with eager_celery(), override_settings(MEMORY_EXTRACT_MIN_FLOORS=6, MEMORY_EXTRACT_BATCH_FLOORS=8), \
            django_capture_on_commit_callbacks(execute=True):
        for message in load_fixture("en_new_user_travel")["messages"]:
            message_append(workspace=workspace, external_id="trip", role=message["role"],
                           content=message["content"], user_id="u-maya")
    return "trip"


def _context(api, cid, **body):
    response = api.post(f"/v1/conversations/{cid}/context", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()["data"]


def _memory_sections(system: str) -> str:
    """The summary and memory sections of the system text (what the budget covers)."""
    start = system.find(f"## {LABELS['summary']}")
    if start < 0:
        start = system.find("## Relevant memories")
    end = system.find(f"## {LABELS['stores']}")
    return system[start:end if end >= 0 else None].rstrip()


@pytest.mark.parametrize("budget", [60, 150, 300, 1000])
def test_summary_and_memories_together_fit_the_budget(api, travel, budget):
    data = _context(api, travel, query="which seat and hotel?", max_messages=2, memory_token_budget=budget)
    assert data["summary"], "the fixture gives the conversation a rolling summary"
    section = _memory_sections(data["system"])
    assert count_tokens(section) <= budget, (budget, count_tokens(section))
    assert data["usage"]["summary_tokens"] <= budget * SUMMARY_BUDGET_SHARE


def test_the_summary_does_not_repeat_an_injected_fact(api, travel):
    data = _context(api, travel, query="seat preference window aisle", max_messages=2, memory_token_budget=1000)
    facts = [e["content"] for e in data["memory"]["injected"] if e.get("type") == "fact"]
    assert facts
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", data["summary"] or "") if s]
    for fact in facts:
        assert not any(fact.rstrip(".") in sentence for sentence in sentences), (fact, data["summary"])


def test_without_memories_the_summary_alone_fits(api, travel):
    data = _context(api, travel, max_messages=2, memory_token_budget=40, include_memories=False)
    assert count_tokens(_memory_sections(data["system"] or "")) <= 40
