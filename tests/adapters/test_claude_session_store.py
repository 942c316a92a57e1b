"""The Claude Agent SDK's own SessionStore conformance suite, against the live server."""

from __future__ import annotations

import pytest
from claude_agent_sdk.testing import run_session_store_conformance

from memory_client import MemoryClient


async def test_conformance_every_contract(live_server, key_pool):
    # The suite wants an empty, isolated store per contract: a fresh workspace each.
    keys = list(key_pool)

    def make_store():
        return MemoryClient(live_server.url, keys.pop(), max_retries=4).claude_session_store()

    await run_session_store_conformance(make_store)


async def test_uuid_is_an_idempotency_key_and_messages_show_in_the_api(client):
    store = client.claude_session_store()
    key = {"project_key": "-home-me-proj", "session_id": "3f0c2a8e-1111-4222-8333-944455556666"}
    user = {"type": "user", "uuid": "u1", "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "Plan the trip to Kyoto"}}
    assistant = {"type": "assistant", "uuid": "a1", "message": {"role": "assistant",
                 "content": [{"type": "text", "text": "Day 1: Fushimi Inari"}]}, "extra": {"nested": [1, None, "x"]}}
    await store.append(key, [user, {"type": "custom-title", "customTitle": "Kyoto"}])
    await store.append(key, [user, assistant])  # u1 again: ignored
    assert await store.load(key) == [user, {"type": "custom-title", "customTitle": "Kyoto"}, assistant]

    conversations = client.list_conversations(source="claude_agent_sdk").items
    assert len(conversations) == 1 and conversations[0].message_count == 2
    messages = client.get_messages(conversation_id=conversations[0].conversation_id)
    assert [(m.role, m.content) for m in messages] == [
        ("user", "Plan the trip to Kyoto"),
        ("assistant", [{"type": "text", "text": "Day 1: Fushimi Inari"}]),
    ]
    summaries = await store.list_session_summaries("-home-me-proj")
    assert summaries[0]["data"].get("custom_title") == "Kyoto" or summaries[0]["data"]
    await store.delete(key)
    assert client.list_conversations(source="claude_agent_sdk").items == []


@pytest.mark.parametrize("bad", [{"project_key": "", "session_id": "s"}, {"project_key": "p", "session_id": "s", "subpath": ""}])
async def test_invalid_keys_are_refused(client, bad):
    from memory_client import MemoryValidationError

    store = client.claude_session_store()
    with pytest.raises(MemoryValidationError):
        await store.append(bad, [{"type": "x"}])
