"""Under review, a correction replaces nothing until it is approved: the
approved value stays in force (and in context) while its successor waits;
approving the successor deprecates it and links the two by `updates`;
rejecting the successor leaves it active. Every version records the status
the memory really had."""

from __future__ import annotations

import pytest
from django.test import override_settings

from accounts.actors import Actor
from conversations.services import message_append
from memories.models import MemoryEdge, MemoryItem, MemoryVersion
from memories.services.items import memory_item_update
from memories.services.items_batch import memory_items_set_lifecycle, memory_items_set_status
from tests.memories.pipeline_helpers import eager_celery

pytestmark = pytest.mark.django_db

FIRST = [
    {"role": "user", "content": "I'm flying to Tokyo in May. I prefer aisle seats on long flights."},
    {"role": "assistant", "content": "Noted: aisle seats for the Tokyo flight."},
]
CORRECTION = [
    {"role": "user", "content": "Actually I changed my mind again: window seats for me."},
    {"role": "assistant", "content": "Window seats it is."},
]


def _say(workspace, messages, django_capture_on_commit_callbacks):
    with eager_celery(), override_settings(MEMORY_EXTRACT_MIN_FLOORS=2, MEMORY_EXTRACT_BATCH_FLOORS=2), \
            django_capture_on_commit_callbacks(execute=True):
        for message in messages:
            message_append(workspace=workspace, external_id="trip", role=message["role"],
                           content=message["content"], user_id="u-ana")


def _seats(workspace):
    return {item.content: item for item in MemoryItem.objects.filter(
        workspace=workspace, type="fact", fact_key="user.preference.seat")}


@pytest.fixture
def operator(admin_user):
    return Actor.for_user(admin_user.pk)


@pytest.fixture
def reviewed(workspace, django_capture_on_commit_callbacks, operator):
    """A review workspace whose aisle-seat fact was approved, then corrected."""
    workspace.requires_review = True
    workspace.save(update_fields=["requires_review"])
    _say(workspace, FIRST, django_capture_on_commit_callbacks)
    (aisle,) = _seats(workspace).values()
    memory_items_set_lifecycle(workspace=workspace, actor=operator, ids=[aisle.pk], lifecycle_status="active")
    _say(workspace, CORRECTION, django_capture_on_commit_callbacks)
    seats = _seats(workspace)
    window = next(item for content, item in seats.items() if "window" in content)
    return MemoryItem.objects.get(pk=aisle.pk), window


def _seat_lines(api, question):
    data = api.post("/v1/conversations/trip/context", {"query": question}, format="json").json()["data"]
    return [entry["content"] for entry in data["memory"]["injected"] if entry["type"] == "fact"
            and "seat" in entry["content"]]


def test_a_pending_correction_supersedes_nothing(api, reviewed):
    aisle, window = reviewed
    assert (aisle.status, aisle.lifecycle_status) == ("active", "active")
    assert window.lifecycle_status == "pending"
    assert not MemoryEdge.objects.filter(relation="updates").exists()
    assert any("aisle" in line for line in _seat_lines(api, "what seat does the user want?"))
    assert not any("window" in line for line in _seat_lines(api, "what seat does the user want?"))
    # The pending item's first version says it was pending, as the API reported it.
    first = MemoryVersion.objects.get(memory_id=window.pk, version=1)
    assert first.attributes["status"] == "pending"
    listed = api.get(f"/v1/memories/{window.pk}/versions").json()["data"]
    assert listed[-1]["attributes"]["status"] == "pending" or listed[0]["attributes"]["status"] == "pending"


def test_rejection_leaves_the_approved_value_active(api, workspace, reviewed, operator):
    aisle, window = reviewed
    memory_items_set_status(workspace=workspace, actor=operator, ids=[window.pk], status="deprecated")
    aisle.refresh_from_db()
    assert (aisle.status, aisle.lifecycle_status) == ("active", "active")
    assert any("aisle" in line for line in _seat_lines(api, "what seat does the user want?"))
    assert not MemoryEdge.objects.filter(relation="updates").exists()


@pytest.mark.parametrize("route", ["batch", "single"])
def test_approval_deprecates_the_old_value_and_writes_the_updates_edge(api, workspace, reviewed, operator, route):
    aisle, window = reviewed
    if route == "batch":
        memory_items_set_lifecycle(workspace=workspace, actor=operator, ids=[window.pk], lifecycle_status="active")
    else:
        memory_item_update(workspace=workspace, actor=operator, memory_id=window.pk,
                           changes={"lifecycle_status": "active"}, expected_version=window.version)
    aisle.refresh_from_db()
    assert (aisle.status, aisle.lifecycle_status) == ("deprecated", "deprecated")
    assert MemoryEdge.objects.filter(from_item=window, to_item=aisle, relation="updates").exists()
    last = MemoryVersion.objects.filter(memory_id=aisle.pk).order_by("-version").first()
    assert last.attributes["status"] == "deprecated" and last.actor_type == "user"
    lines = _seat_lines(api, "what seat does the user want?")
    assert any("window" in line for line in lines) and not any("aisle" in line for line in lines)
    versions = [v.attributes["status"] for v in MemoryVersion.objects.filter(memory_id=window.pk).order_by("version")]
    assert versions == ["pending", "active"]


def test_a_second_pending_value_replaces_the_first_pending_one(workspace, reviewed, django_capture_on_commit_callbacks):
    aisle, window = reviewed
    _say(workspace, [{"role": "user", "content": "Sorry, I prefer middle seats after all."},
                     {"role": "assistant", "content": "Middle seats, noted."}], django_capture_on_commit_callbacks)
    window.refresh_from_db()
    aisle.refresh_from_db()
    assert window.status == "deprecated" and aisle.lifecycle_status == "active"
