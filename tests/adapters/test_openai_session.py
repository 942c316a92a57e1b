"""The contract of the OpenAI Agents SDK's own session tests (SQLiteSession's
semantics), against the live server, plus `Runner.run` end to end."""

from __future__ import annotations

import asyncio
import gc
import json

import pytest
from agents import Agent, RunConfig, Runner, SessionSettings, SQLiteSession, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from memory_client import MemoryValidationError
from memory_client.adapters import openai_agents


def _msgs(n: int, start: int = 0) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(start, start + n)]


@pytest.fixture(params=["memory", "sqlite"])
def make_session(request, client, tmp_path):
    """The same assertions run against the SDK's SQLiteSession, proving they are its semantics."""

    def make(session_id: str, **kwargs):
        if request.param == "sqlite":
            settings = kwargs.pop("session_settings", None)
            if "max_items" in kwargs:
                settings = SessionSettings(limit=kwargs.pop("max_items"))
            return SQLiteSession(session_id, str(tmp_path / "s.db"), session_settings=settings)
        return client.openai_session(session_id, **kwargs)

    return make


async def test_ordering_and_limits(make_session):
    session = make_session("s-order")
    items = _msgs(5)
    await session.add_items(items[:2])
    await session.add_items(items[2:])
    assert await session.get_items() == items
    assert await session.get_items(limit=2) == items[3:]
    assert await session.get_items(limit=4) == items[1:]
    assert await session.get_items(limit=10) == items
    assert await session.get_items(limit=0) == []


async def test_settings_limit_and_explicit_override(make_session):
    session = make_session("s-settings", session_settings=SessionSettings(limit=2))
    items = _msgs(4)
    await session.add_items(items)
    assert await session.get_items() == items[2:]
    assert await session.get_items(limit=3) == items[1:]
    capped = make_session("s-settings-2", max_items=1)
    await capped.add_items(items)
    assert await capped.get_items() == items[3:]


async def test_more_items_than_one_request_takes_are_all_added_in_order(make_session):
    # The service takes 1000 items a request; the SDK's sessions take any number.
    session = make_session("s-many")
    items = _msgs(2_345)
    await session.add_items(items[:1])
    await session.add_items(items[1:])
    assert await session.get_items() == items
    assert await session.get_items(limit=3) == items[-3:]


async def test_items_larger_than_one_request_takes_are_all_added_in_order(make_session, monkeypatch):
    monkeypatch.setattr(openai_agents, "BYTES_PER_REQUEST", 2_000)
    session = make_session("s-large")
    items = [{"role": "user", "content": f"{n} " + "x" * 600} for n in range(9)]
    await session.add_items(items)
    assert await session.get_items() == items


def test_requests_keep_order_and_both_bounds(monkeypatch):
    monkeypatch.setattr(openai_agents, "ITEMS_PER_REQUEST", 3)
    monkeypatch.setattr(openai_agents, "BYTES_PER_REQUEST", 100)
    items = [{"n": n, "pad": "y" * (150 if n == 4 else 10)} for n in range(10)]
    groups = list(openai_agents._requests(items))
    assert [item for group in groups for item in group] == items
    assert all(len(group) <= 3 for group in groups)
    sizes = [sum(len(json.dumps(i, separators=(",", ":"))) + 1 for i in group) for group in groups]
    assert all(size <= 100 for group, size in zip(groups, sizes, strict=True) if len(group) > 1)
    assert [{"n": 4, "pad": "y" * 150}] in groups  # larger than a request alone: sent alone


async def test_pop_clear_empty_and_isolation(make_session):
    a, b = make_session("s-a"), make_session("s-b")
    assert await a.pop_item() is None
    await a.add_items([])
    assert await a.get_items() == []
    await a.add_items(_msgs(3))
    await b.add_items(_msgs(1, start=10))
    assert await a.pop_item() == _msgs(3)[2]
    assert await a.get_items() == _msgs(2)
    assert await b.get_items() == _msgs(1, start=10)
    await a.clear_session()
    assert await a.get_items() == []
    assert await b.get_items() == _msgs(1, start=10)


async def test_unicode_and_structured_items_round_trip(make_session):
    session = make_session("s-unicode")
    items = [
        {"role": "user", "content": "你好 🌍 'quotes' \"; DROP TABLE x; --"},
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{\"q\": 1}", "id": "fc1"},
        {"type": "function_call_output", "call_id": "c1", "output": "result"},
        {"role": "assistant", "type": "message", "content": [{"type": "output_text", "text": "done", "annotations": []}],
         "status": "completed", "id": "m1"},
    ]
    await session.add_items(items)
    assert await session.get_items() == items


async def test_a_batch_is_atomic(client):
    session = client.openai_session("s-atomic")
    await session.add_items(_msgs(2))
    with pytest.raises(MemoryValidationError):
        await session.add_items([{"role": "user", "content": "ok"}, "not an item"])
    assert await session.get_items() == _msgs(2)


def test_each_event_loop_connection_closes_with_its_loop(client):
    """A session used from several `asyncio.run`s opens a connection per loop
    and closes each as its loop finishes: none is left open behind it."""
    session = client.openai_session("s-loops")

    async def turn():
        await session.add_items(_msgs(1))
        assert await session.get_items()
        return await session._conn.aclient()

    first, second = asyncio.run(turn()), asyncio.run(turn())
    assert first is not second
    assert first.is_closed and second.is_closed
    assert asyncio.run(session.get_items()) == _msgs(1) * 2
    # Nothing of the finished loops is kept (neither they nor their clients).
    gc.collect()
    assert len(session._conn._async) == 0


async def test_items_are_messages_of_a_conversation(client):
    session = client.openai_session("chat-42")
    await session.add_items([{"role": "user", "content": "hi"}, {"type": "function_call_output", "call_id": "c", "output": "x"}])
    meta = client.get_conversation(conversation_id="chat-42")
    assert meta.source == "openai_agents" and meta.message_count == 2
    messages = client.get_messages(conversation_id="chat-42")
    assert [m.role for m in messages] == ["user", "tool"]
    # A message appended through the plain API reads back as an item too.
    client.append_message(conversation_id="chat-42", role="assistant", content="hello")
    assert (await session.get_items(limit=1)) == [{"role": "assistant", "content": "hello"}]


async def test_runner_end_to_end_with_scripted_model(client):
    @function_tool
    def get_weather(city: str) -> str:
        """Weather of a city."""
        return f"sunny in {city}"

    model = ScriptedModel()
    model.enqueue([function_call("get_weather", {"city": "Kyoto"}, call_id="call_1")])
    model.enqueue([assistant_message("It is sunny in Kyoto.")])
    model.enqueue([assistant_message("You asked about Kyoto.")])
    agent = Agent(name="assistant", model=model, tools=[get_weather])
    session = client.openai_session("runner-1")

    first = await Runner.run(agent, "Weather in Kyoto?", session=session, run_config=RunConfig(tracing_disabled=True))
    assert first.final_output == "It is sunny in Kyoto."
    second = await Runner.run(
        agent, "What did I ask?", session=session, run_config=RunConfig(session_settings=SessionSettings(limit=50), tracing_disabled=True)
    )
    assert second.final_output == "You asked about Kyoto."
    # The second call saw the whole first turn from the server-side session.
    second_input = model.last_call.input
    assert any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in second_input)
    items = await session.get_items()
    assert items[0] == {"role": "user", "content": "Weather in Kyoto?"}
    assert client.get_conversation(conversation_id="runner-1").message_count == len(items)
