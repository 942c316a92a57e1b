"""Filters are a contract: `user_id` and `conversation_id` narrow memory lists,
an unknown filter is a 400 in the error shape; and the two endpoints Mem0 and
Zep users reach for: a search by meaning over a user's memories
(`GET /v1/memories?user_id=...&query=...`) and deleting all of a user's
memories (`DELETE /v1/memories?user_id=...`), following lineage."""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from conversations.services import message_append
from memories.models import MemoryItem, MemoryVersion, SummaryTier
from memories.services.items import memory_item_create
from tests.memories.helpers_items import AGENT, error_type

pytestmark = pytest.mark.django_db


def _fact(workspace, content, *, scope="user", scope_id="u-ana", **fields):
    return memory_item_create(workspace=workspace, actor=AGENT, scope=scope, scope_id=scope_id, type="fact",
                              content=content, **fields)


@pytest.fixture
def people(workspace):
    """Ana's and Ben's facts, a global one, and a chat memory of Ana's conversation."""
    message = message_append(workspace=workspace, external_id="ana-trip", role="user",
                             content="I prefer window seats.", user_id="u-ana").message
    message_append(workspace=workspace, external_id="ben-chat", role="user", content="Hi", user_id="u-ben")
    return {
        "ana_seat": _fact(workspace, "Ana prefers window seats on long flights", source_message_id=message.pk),
        "ana_tea": _fact(workspace, "Ana drinks green tea every morning"),
        "ben_seat": _fact(workspace, "Ben prefers aisle seats", scope_id="u-ben"),
        "global": _fact(workspace, "The office closes at six", scope="global", scope_id=""),
        "ana_chat": _fact(workspace, "Ana wants a hotel in Chiado", scope="chat", scope_id="ana-trip"),
        "ben_branch": _fact(workspace, "Ben asked about trains", scope="branch", scope_id='["ben-chat","main"]'),
    }


def _ids(response) -> set[str]:
    assert response.status_code == 200, response.content
    return {row["id"] for row in response.json()["data"]}


def test_user_id_lists_that_users_memories_only(api, people):
    response = api.get("/v1/memories", {"user_id": "u-ana"})
    assert _ids(response) == {people["ana_seat"].pk, people["ana_tea"].pk}
    assert response.json()["meta"]["total"] == 2
    with_conversations = api.get("/v1/memories", {"user_id": "u-ana", "include_conversations": "true"})
    assert _ids(with_conversations) == {people["ana_seat"].pk, people["ana_tea"].pk, people["ana_chat"].pk}
    assert _ids(api.get("/v1/memories", {"user_id": "nobody"})) == set()
    stats = api.get("/v1/memories/stats", {"user_id": "u-ben"}).json()["data"]
    assert stats["total"] == 1


def test_conversation_id_lists_its_own_memories_and_those_made_from_its_messages(api, people):
    assert _ids(api.get("/v1/memories", {"conversation_id": "ana-trip"})) == {
        people["ana_chat"].pk, people["ana_seat"].pk}
    assert _ids(api.get("/v1/memories", {"conversation_id": "ben-chat"})) == {people["ben_branch"].pk}
    assert _ids(api.get("/v1/memories", {"conversation_id": "nope"})) == set()


@pytest.mark.parametrize("path", ["/v1/memories", "/v1/memories/stats", "/v1/memory_edges"])
def test_an_unknown_filter_is_a_400_in_the_error_shape(api, people, path):
    response = api.get(path, {"bogus": "1"})
    assert response.status_code == 400
    body = response.json()
    assert body["type"] == "error" and error_type(response) == "invalid_request_error"
    assert "bogus" in body["error"]["message"]


def test_an_unknown_filter_on_versions_is_a_400(api, people):
    response = api.get(f"/v1/memories/{people['ana_seat'].pk}/versions", {"user": "u-ana"})
    assert response.status_code == 400 and error_type(response) == "invalid_request_error"


def test_search_ranks_a_users_memories_by_relevance(api, people):
    response = api.get("/v1/memories", {"user_id": "u-ana", "query": "which seats does she like on flights?"})
    assert response.status_code == 200, response.content
    rows = response.json()["data"]
    assert rows and rows[0]["id"] == people["ana_seat"].pk
    assert 0 < rows[0]["score"] <= 1
    # Another user's memory about seats is never in Ana's results.
    assert people["ben_seat"].pk not in {row["id"] for row in rows}
    # Nothing of Ana's is about passwords: nothing comes back.
    assert api.get("/v1/memories", {"user_id": "u-ana", "query": "reset password"}).json()["data"] == []


def test_search_leaves_out_deprecated_memories_and_needs_a_scope(api, workspace, people):
    api.patch(f"/v1/memories/{people['ana_seat'].pk}", {"status": "deprecated"}, format="json")
    rows = api.get("/v1/memories", {"user_id": "u-ana", "query": "window seats"}).json()["data"]
    assert people["ana_seat"].pk not in {row["id"] for row in rows}
    rows = api.get("/v1/memories", {"user_id": "u-ana", "query": "window seats", "status": "deprecated"}).json()
    assert [row["id"] for row in rows["data"]] == [people["ana_seat"].pk]
    assert error_type(api.get("/v1/memories", {"query": "seats"})) == "invalid_request_error"
    assert error_type(api.get("/v1/memories", {"user_id": "u-ana", "query": " "})) == "invalid_request_error"


def test_deleting_a_users_memories_follows_lineage(api, workspace, people):
    # A macro compacted from Ana's facts quotes them: it goes with them.
    macro = memory_item_create(workspace=workspace, actor=Actor.system(), scope="user", scope_id="u-ana",
                               type="summary", summary_tier=SummaryTier.MACRO,
                               content="Ana: window seats, green tea")
    MemoryItem.objects.filter(pk=macro.pk).update(source_memory_ids=[people["ana_seat"].pk])
    assert api.delete("/v1/memories").status_code == 400  # never "everything" by omission
    assert api.delete("/v1/memories", QUERY_STRING="user_id=u-ana&bogus=1").status_code == 400
    response = api.delete("/v1/memories?user_id=u-ana")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["data"]["deleted"] == 3 and body["data"]["user_id"] == "u-ana"
    remaining = set(MemoryItem.objects.values_list("pk", flat=True))
    assert remaining == {people[name].pk for name in ("ben_seat", "global", "ana_chat", "ben_branch")}
    # The deleted memories' versions keep no text.
    deleted = MemoryVersion.objects.filter(memory_id=people["ana_seat"].pk, operation="deleted")
    assert deleted.exists()
    again = api.delete("/v1/memories?user_id=u-ana").json()
    assert again["data"]["deleted"] == 0


def test_a_read_only_key_cannot_delete_a_users_memories(workspace, people):
    from rest_framework.test import APIClient

    from tests.factories import make_api_key

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_api_key(workspace, read_only=True)}")
    assert client.delete("/v1/memories?user_id=u-ana").status_code == 403
    assert MemoryItem.objects.filter(scope="user", scope_id="u-ana").count() == 2


def test_the_schema_documents_search_and_delete(api):
    schema = api.get("/v1/schema/", HTTP_ACCEPT="application/json").json()
    operations = schema["paths"]["/v1/memories"]
    names = {p["name"] for p in operations["get"]["parameters"]}
    assert {"user_id", "conversation_id", "query", "include_conversations"} <= names
    assert operations["delete"]["operationId"] == "memories_delete_for_user"
    assert {p["name"] for p in operations["delete"]["parameters"]} == {"user_id", "include_conversations"}
