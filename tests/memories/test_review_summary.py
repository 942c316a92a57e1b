"""Review is airtight through the rolling summary: in a workspace that
requires review, no reader (the conversation's metadata, `/context`, MCP
`recall` and the summary resource) sees text derived from a memory that was
never approved, before approval or after rejection; approved summaries are
what readers get."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from accounts.actors import Actor
from agent_tools.mcp.resources import resource_read, summary_uri
from agent_tools.mcp.tools import agent_tool_execute
from memories.models import LifecycleStatus, MemoryItem, MemoryType, ScopeState
from memories.services.items_batch import memory_items_set_lifecycle, memory_items_set_status
from tests.conversations.helpers import append_ok, conv_url
from tests.memories.pipeline_helpers import eager_celery

pytestmark = pytest.mark.django_db(transaction=True)

CODE = "LOCKER-7731-QZ"
DIALOG = [
    ("user", f"The code of my gym locker is {CODE}, remember it."),
    ("assistant", "Noted, I will remember your locker code."),
    ("user", "I go to the gym every Tuesday and Thursday."),
    ("assistant", "Great routine."),
]
PIPELINE = {"MEMORY_EXTRACT_MIN_FLOORS": 4, "MEMORY_EXTRACT_BATCH_FLOORS": 4, "MEMORY_EXTRACT_MIN_TOKENS": 10**6}
OPERATOR = Actor.for_user(1)


def _readers(api, workspace) -> dict[str, str]:
    conversation = api.get(conv_url("c1")).json()
    context = api.post(conv_url("c1", "/context"), {"query": "locker code gym"}, format="json").json()["data"]
    recalled = agent_tool_execute(workspace=workspace, api_key=None, name="recall",
                                  arguments={"conversation_id": "c1", "query": "gym"}, actor=Actor.system())
    resource = resource_read(workspace=workspace, uri=summary_uri("c1"))
    return {
        "conversation": json.dumps(conversation, ensure_ascii=False),
        "context": json.dumps([context["summary"], context["system"], context["memory"]["injected"]],
                              ensure_ascii=False),
        # Passages quote the conversation's own messages, which are not
        # derived text: the summary and the memories are.
        "mcp.recall": json.dumps([recalled.output["summary"]] + [
            entry for entry in recalled.output["memories"] if entry.get("kind") != "passage"], ensure_ascii=False),
        "mcp.resource": resource.text,
    }


@pytest.fixture
def reviewed(api, workspace):
    workspace.requires_review = True
    workspace.save(update_fields=["requires_review"])
    with eager_celery(), override_settings(**PIPELINE):
        for role, content in DIALOG:
            append_ok(api, "c1", content, role)
    pending = MemoryItem.objects.filter(workspace=workspace, lifecycle_status=LifecycleStatus.PENDING)
    assert pending.filter(content__contains=CODE).exists()
    # Operators still see what was withheld, in the scope's state.
    assert CODE in ScopeState.objects.get(workspace=workspace, scope="branch").rolling_summary
    return pending


def _leaks(api, workspace) -> list[str]:
    return [name for name, text in _readers(api, workspace).items() if CODE in text]


def test_no_reader_sees_the_summary_of_pending_items(api, workspace, reviewed):
    assert _leaks(api, workspace) == []


def test_rejecting_the_items_releases_nothing(api, workspace, reviewed):
    ids = list(reviewed.values_list("pk", flat=True))
    memory_items_set_status(workspace=workspace, actor=OPERATOR, ids=ids, status="deprecated")
    assert not MemoryItem.objects.filter(workspace=workspace, lifecycle_status=LifecycleStatus.PENDING).exists()
    assert _leaks(api, workspace) == []


def test_approved_summaries_are_what_readers_get(api, workspace, reviewed):
    summaries = list(reviewed.filter(type=MemoryType.SUMMARY).values_list("pk", flat=True))
    assert summaries
    memory_items_set_lifecycle(workspace=workspace, actor=OPERATOR, ids=summaries, lifecycle_status="active")
    approved = MemoryItem.objects.get(pk=summaries[0]).content
    assert resource_read(workspace=workspace, uri=summary_uri("c1")).text == approved
    context = api.post(conv_url("c1", "/context"), {"query": "gym"}, format="json").json()["data"]
    # The approved summary reaches the model once: as the rolling summary, or,
    # when it is selected as a memory, there alone (the rolling summary never
    # repeats what is injected beside it).
    assert context["summary"] in (approved, None)
    assert context["system"].count(approved) == 1
