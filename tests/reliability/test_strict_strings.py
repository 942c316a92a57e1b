"""String inputs must arrive as JSON strings: a number is a 400 and nothing is
stored (DRF's CharField would quietly turn 0 into "0")."""

from __future__ import annotations

import pytest

from conversations.models import Conversation
from memories.models import MemoryEdge
from memories.resources.models import ConversationResource

pytestmark = pytest.mark.django_db


def _error_type(response) -> str:
    return response.json()["error"]["type"]


def test_conversation_user_id_as_a_number_is_refused(api):
    response = api.post("/v1/conversations", {"conversation_id": "c1", "user_id": 0}, format="json")
    assert response.status_code == 400 and _error_type(response) == "invalid_request_error"
    assert not Conversation.objects.exists()


def test_edge_ends_as_numbers_are_refused(api):
    response = api.post("/v1/memory_edges", {"from_id": 1, "to_id": 2, "relation": "supports"}, format="json")
    assert response.status_code == 400 and _error_type(response) == "invalid_request_error"
    assert not MemoryEdge.objects.exists()


def test_context_query_as_a_number_is_refused(api):
    api.post("/v1/conversations/c1/messages", {"role": "user", "content": "hi"}, format="json")
    response = api.post("/v1/conversations/c1/context", {"query": 42}, format="json")
    assert response.status_code == 400 and _error_type(response) == "invalid_request_error"


def test_resource_store_ids_as_numbers_are_refused(api):
    response = api.put("/v1/conversations/c1/resources", {"memory_store_ids": [7]}, format="json")
    assert response.status_code == 400 and _error_type(response) == "invalid_request_error"
    assert not ConversationResource.objects.exists()
