"""langgraph-checkpoint-conformance (every base and extended capability) and a
real StateGraph (interrupt/resume, history, fork), sync and async."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from memory_client import MemoryClient


async def test_conformance_all_capabilities(live_server, api_key):
    client = MemoryClient(live_server.url, api_key, max_retries=4)

    @checkpointer_test(name="MemoryCheckpointSaver")
    async def saver():
        yield client.langgraph_checkpointer_for()

    report = await validate(saver)
    report.print_report()
    assert report.passed_all_base()
    assert report.passed_all(), report.to_dict()


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def _graph(checkpointer):
    def plan(state: State) -> dict:
        return {"log": ["planned"]}

    def approve(state: State) -> dict:
        answer = interrupt("approve?")
        return {"log": [f"approved:{answer}"]}

    def act(state: State) -> dict:
        return {"log": ["acted"]}

    builder = StateGraph(State)
    builder.add_node("plan", plan)
    builder.add_node("approve", approve)
    builder.add_node("act", act)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "approve")
    builder.add_edge("approve", "act")
    builder.add_edge("act", END)
    return builder.compile(checkpointer=checkpointer)


def _scenario(checkpointer, thread_id: str) -> dict:
    """Interrupt, resume, read history, fork from an earlier checkpoint (edit its
    state and run on from there, answering the interrupt differently)."""
    graph = _graph(checkpointer)
    config = {"configurable": {"thread_id": thread_id}}
    first = graph.invoke({"log": ["start"]}, config)
    waiting_next = graph.get_state(config).next
    done = graph.invoke(Command(resume="yes"), config)
    history = list(graph.get_state_history(config))
    planned = next(snapshot for snapshot in history if snapshot.next == ("approve",))
    fork_config = graph.update_state(planned.config, {"log": ["edited"]})
    interrupted_again = graph.invoke(None, fork_config)
    forked = graph.invoke(Command(resume="no"), {"configurable": {"thread_id": thread_id}})
    return {
        "interrupted": "__interrupt__" in first and "__interrupt__" in interrupted_again,
        "waiting_next": waiting_next,
        "done": done["log"],
        "history": [(s.next, s.values.get("log"), s.metadata.get("source"), s.metadata.get("step")) for s in history],
        "forked": forked["log"],
        "latest": graph.get_state(config).values["log"],
        "history_after_fork": len(list(graph.get_state_history(config))),
    }


def test_state_graph_behaves_like_langgraphs_in_memory_saver(client):
    ours = _scenario(client.langgraph_checkpointer, "lg-sync")
    reference = _scenario(InMemorySaver(), "lg-sync")
    assert ours == reference
    assert ours["interrupted"] and ours["waiting_next"] == ("approve",)
    assert ours["done"] == ["start", "planned", "approved:yes", "acted"]
    assert ours["forked"] == ["start", "planned", "edited", "approved:no", "acted"]
    assert client.get_conversation(conversation_id="lg-sync").source == "langgraph"

    client.langgraph_checkpointer.delete_thread("lg-sync")
    assert _graph(client.langgraph_checkpointer).get_state({"configurable": {"thread_id": "lg-sync"}}).values == {}


async def _ascenario(checkpointer, thread_id: str) -> dict:
    graph = _graph(checkpointer)
    config = {"configurable": {"thread_id": thread_id}}
    await graph.ainvoke({"log": ["start"]}, config)
    waiting_next = (await graph.aget_state(config)).next
    done = await graph.ainvoke(Command(resume="ok"), config)
    history = [s async for s in graph.aget_state_history(config)]
    return {
        "waiting_next": waiting_next,
        "done": done["log"],
        "history": [(s.next, s.values.get("log"), s.metadata.get("step")) for s in history],
    }


async def test_state_graph_async_behaves_like_in_memory_saver(aclient):
    ours = await _ascenario(aclient.langgraph_checkpointer, "lg-async")
    assert ours == await _ascenario(InMemorySaver(), "lg-async")
    assert ours["waiting_next"] == ("approve",) and ours["done"] == ["start", "planned", "approved:ok", "acted"]
    graph = _graph(aclient.langgraph_checkpointer)
    await aclient.langgraph_checkpointer.acopy_thread("lg-async", "lg-async-copy")
    copied = await graph.aget_state({"configurable": {"thread_id": "lg-async-copy"}})
    assert copied.values["log"] == ours["done"]
    await aclient.langgraph_checkpointer.aprune(["lg-async"])
    assert len([s async for s in graph.aget_state_history({"configurable": {"thread_id": "lg-async"}})]) == 1
