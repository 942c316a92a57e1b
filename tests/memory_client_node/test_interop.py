"""Python and Node on the same data: a Claude session written by the Python
adapter is read and continued from Node and read back in Python; a LangGraph
thread started in Python resumes in LangGraph.js and again in Python."""

from __future__ import annotations

import asyncio
import json
import re
import uuid

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from memory_client.adapters.langgraph_checkpoint import LangGraphJsonSerializer
from tests.adapters.deep_agent_process import ScriptedChatModel
from tests.memory_client_node.conftest import run_node

# Node processes against a live server: minutes, not seconds (`make test-quick` leaves them out).
pytestmark = pytest.mark.slow


def _entry(kind: str, text: str, parent: str | None) -> dict:
    message = {"role": kind, "content": text if kind == "user" else [{"type": "text", "text": text}]}
    return {"type": kind, "uuid": str(uuid.uuid4()), "parentUuid": parent, "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/work", "message": message}


def test_claude_session_shared_between_python_and_node(live_server, api_key, client, node_package):
    store = client.claude_session_store()
    key = {"project_key": "shared-project", "session_id": str(uuid.uuid4())}
    first = _entry("user", "Plan a trip to Lisbon", None)
    second = _entry("assistant", "Sure, when?", first["uuid"])
    asyncio.run(store.append(key, [first, second]))

    third = _entry("user", "In May", second["uuid"])
    env = {"MEMORY_BASE_URL": live_server.url, "MEMORY_API_KEY": api_key}
    node = run_node(node_package, "test/interop/claude-session.mjs", key["project_key"], key["session_id"],
                    json.dumps([third]), env=env)
    # Node read what Python wrote, and sees the summary Python folded.
    assert node["loaded"] == [first, second]
    assert [s["sessionId"] for s in node["sessions"]] == [key["session_id"]]
    [summary] = node["summaries"]
    assert summary["sessionId"] == key["session_id"]
    assert summary["data"]["firstPrompt"] == "Plan a trip to Lisbon"

    # Python reads what Node appended, with the summary Node folded in Python's shape.
    fresh = client.claude_session_store()
    assert asyncio.run(fresh.load(key)) == [first, second, third]
    [python_summary] = asyncio.run(fresh.list_session_summaries("shared-project"))
    assert python_summary["data"] == {re.sub(r"[A-Z]", lambda c: "_" + c[0].lower(), k): v
                                      for k, v in summary["data"].items()}
    assert python_summary["data"]["first_prompt"] == "Plan a trip to Lisbon"
    assert python_summary["mtime"] == summary["mtime"]
    fourth = _entry("assistant", "Booked.", third["uuid"])
    asyncio.run(fresh.append(key, [fourth]))
    assert asyncio.run(store.load(key))[-1] == fourth


def _graph(model, checkpointer):
    def agent(state):
        return {"messages": [model.invoke(state["messages"])]}

    return StateGraph(MessagesState).add_node("agent", agent).add_edge(START, "agent").compile(checkpointer=checkpointer)


def test_langgraph_thread_resumes_across_languages(live_server, api_key, client, node_package):
    thread = {"configurable": {"thread_id": f"shared-{uuid.uuid4().hex[:8]}"}}
    # The Python side writes LangGraph.js's JSON (its default, msgpack, is Python-only).
    checkpointer = client.langgraph_checkpointer_for(serde=LangGraphJsonSerializer())
    _graph(ScriptedChatModel(replies=[AIMessage("Hi Ana.")]), checkpointer).invoke(
        {"messages": [HumanMessage("I am Ana.")]}, thread
    )

    env = {"MEMORY_BASE_URL": live_server.url, "MEMORY_API_KEY": api_key}
    node = run_node(node_package, "test/interop/langgraph-turn.mjs", thread["configurable"]["thread_id"], "Who am I?",
                    "You are Ana.", env=env)
    assert node["seen"] == [["human", "I am Ana."], ["ai", "Hi Ana."], ["human", "Who am I?"]]

    model = ScriptedChatModel(replies=[AIMessage("Still Ana.")])
    state = _graph(model, client.langgraph_checkpointer_for(serde=LangGraphJsonSerializer())).invoke(
        {"messages": [HumanMessage("Again?")]}, thread
    )
    assert [(m.type, m.content) for m in model.seen[0]] == [
        ("human", "I am Ana."), ("ai", "Hi Ana."), ("human", "Who am I?"), ("ai", "You are Ana."), ("human", "Again?"),
    ]
    assert state["messages"][-1].content == "Still Ana."
