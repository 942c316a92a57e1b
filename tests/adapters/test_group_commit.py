"""The client's group commit: what is asked for while a batch is in flight
travels together in the next one; urgent ops never wait behind others; each
caller gets its own op's answer."""

from __future__ import annotations

import asyncio
import operator
import threading
import time
from typing import Annotated, TypedDict

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from memory_client import MemoryClient
from memory_client.adapters._group_commit import AsyncGroupCommit, GroupCommit
from memory_client.errors import MemoryValidationError


def _start(target, *args) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def _join(*threads: threading.Thread) -> None:
    for thread in threads:
        thread.join(5)
        assert not thread.is_alive(), "a caller never returned"


def _wait_until(condition, seconds: float = 5) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


class _HeldSend:
    """A group commit's `send`: records each batch, answers each op with
    `answer(op)`, and holds the batch equal to `held` in flight until
    `release` is set."""

    def __init__(self, held: list, answer=lambda op: op):
        self.held, self.answer = held, answer
        self.batches: list[list] = []
        self.in_flight, self.release = threading.Event(), threading.Event()

    def __call__(self, ops: list) -> list:
        self.batches.append(list(ops))
        if ops == self.held:
            self.in_flight.set()
            self.release.wait(5)
        return [self.answer(op) for op in ops]


def test_ops_queued_behind_a_batch_travel_together_in_the_next():
    send = _HeldSend(["a"], answer=lambda op: f"stored {op}")
    batches = send.batches
    commit: GroupCommit[str] = GroupCommit(send)
    answers: dict[str, str] = {}

    def save(op: str) -> None:
        answers[op] = commit.run(op)

    first = _start(save, "a")
    assert send.in_flight.wait(5)
    queued = [_start(save, op) for op in ("b", "c", "d")]
    _wait_until(lambda: len(commit._queue) == 3)  # all three wait behind the batch in flight
    send.release.set()
    _join(first, *queued)
    assert batches[0] == ["a"] and sorted(batches[1]) == ["b", "c", "d"] and len(batches) == 2
    assert answers == {op: f"stored {op}" for op in "abcd"}


def test_an_urgent_op_does_not_wait_behind_a_batch_of_others():
    send = _HeldSend(["write"])
    commit: GroupCommit[str] = GroupCommit(send, urgent=lambda op: op.startswith("put"))
    slow = _start(commit.run, "write")
    assert send.in_flight.wait(5)
    assert commit.run("put") == "put"  # sent while the writes' batch is still in flight
    send.release.set()
    _join(slow)
    assert send.batches == [["write"], ["put"]]


def test_ops_queued_behind_an_urgent_batch_wait_a_moment_to_ride_with_the_next(monkeypatch):
    monkeypatch.setattr("memory_client.adapters._group_commit.LINGER_SECONDS", 5.0)
    send = _HeldSend(["put-1"])
    commit: GroupCommit[str] = GroupCommit(send, urgent=lambda op: op.startswith("put"))
    first = _start(commit.run, "put-1")
    assert send.in_flight.wait(5)
    write = _start(commit.run, "write")
    _wait_until(lambda: len(commit._queue) == 1)
    send.release.set()
    _join(first)
    assert commit.run("put-2") == "put-2"  # within the linger: the write goes with it
    _join(write)
    assert send.batches == [["put-1"], ["write", "put-2"]]


def test_each_caller_gets_its_own_ops_answer_and_a_failed_batch_fails_all_its_callers():
    send = _HeldSend([0], answer=lambda op: ValueError(op) if op < 0 else op)
    commit: GroupCommit[int] = GroupCommit(send)
    answers: dict[int, object] = {}

    def save(op: int) -> None:
        try:
            answers[op] = commit.run(op)
        except ValueError as exc:
            answers[op] = exc

    first = _start(save, 0)
    assert send.in_flight.wait(5)
    shared = [_start(save, op) for op in (1, -1, 2)]
    _wait_until(lambda: len(commit._queue) == 3)
    send.release.set()
    _join(first, *shared)
    assert sorted(send.batches[1]) == [-1, 1, 2]  # one batch, three answers
    assert answers[1] == 1 and answers[2] == 2 and isinstance(answers[-1], ValueError)

    def broken(ops: list[int]) -> list[int]:
        raise ConnectionError("down")

    with pytest.raises(ConnectionError):
        GroupCommit(broken).run(1)


class _HeldAsyncSend:
    """`_HeldSend` for an async group commit: records each batch, answers
    each op with `answer(op)`, and holds the batch equal to `held` until
    `release` is set."""

    def __init__(self, held: list, answer=lambda op: op):
        self.held, self.answer = held, answer
        self.batches: list[list] = []
        self.release = asyncio.Event()

    async def __call__(self, ops: list) -> list:
        self.batches.append(list(ops))
        if ops == self.held:
            await self.release.wait()
        return [self.answer(op) for op in ops]


async def test_async_ops_queued_behind_a_batch_travel_together():
    send = _HeldAsyncSend(["a"], answer=str.upper)
    batches, release = send.batches, send.release
    commit: AsyncGroupCommit[str] = AsyncGroupCommit(send)
    first = asyncio.create_task(commit.run("a"))
    await asyncio.sleep(0)
    rest = [asyncio.create_task(commit.run(op)) for op in "bcd"]
    await asyncio.sleep(0)
    release.set()
    assert await asyncio.gather(first, *rest) == ["A", "B", "C", "D"]
    assert batches == [["a"], ["b", "c", "d"]]


async def test_a_cancelled_async_caller_does_not_cancel_the_batch_it_rode_in():
    send = _HeldAsyncSend(["a"])
    sent, release = send.batches, send.release
    commit: AsyncGroupCommit[str] = AsyncGroupCommit(send)
    stored: list[str] = []
    riding = asyncio.create_task(commit.run("a"))
    other = asyncio.create_task(commit.run("a2"))
    await asyncio.sleep(0)
    riding.cancel()
    with pytest.raises(asyncio.CancelledError):
        await riding
    release.set()
    stored.append(await asyncio.wait_for(other, 5))  # the batch that carried "a" went on
    assert await asyncio.wait_for(commit.run("b"), 5) == "b"
    assert sent == [["a"], ["a2"], ["b"]] and stored == ["a2"]


async def test_an_async_caller_cancelled_while_queued_is_not_sent():
    send = _HeldAsyncSend(["first"])
    sent, release = send.batches, send.release
    commit: AsyncGroupCommit[str] = AsyncGroupCommit(send)
    first = asyncio.create_task(commit.run("first"))
    await asyncio.sleep(0)
    queued = asyncio.create_task(commit.run("given up"))
    kept = asyncio.create_task(commit.run("kept"))
    await asyncio.sleep(0)
    queued.cancel()
    with pytest.raises(asyncio.CancelledError):
        await queued
    release.set()
    assert await asyncio.wait_for(asyncio.gather(first, kept), 5) == ["first", "kept"]
    assert sent == [["first"], ["kept"]]


class _CountingTransport(httpx.HTTPTransport):
    """The real HTTP transport, noting the path of each POST; with
    `slow_puts`, a request carrying a checkpoint put waits that long first
    (a slow network), so what LangGraph saves meanwhile queues behind it."""

    def __init__(self, slow_puts: float = 0.0) -> None:
        super().__init__()
        self.posts: list[str] = []
        self.slow_puts = slow_puts

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            self.posts.append(request.url.path)
            single_put = request.url.path.endswith("/langgraph_checkpoints")
            if self.slow_puts and (single_put or b'"op":"put"' in request.read().replace(b" ", b"")):
                time.sleep(self.slow_puts)
        return super().handle_request(request)


class Steps(TypedDict):
    steps: Annotated[list[str], operator.add]


def _linear_graph(checkpointer, length: int = 10):
    builder = StateGraph(Steps)
    names = [f"step{i}" for i in range(length)]
    for name in names:
        builder.add_node(name, lambda state, name=name: {"steps": [name]})
    builder.add_edge(START, names[0])
    for a, b in zip(names, names[1:], strict=False):
        builder.add_edge(a, b)
    builder.add_edge(names[-1], END)
    return builder.compile(checkpointer=checkpointer)


def test_a_graph_run_sends_its_saves_in_fewer_requests_and_stores_the_same_history(live_server, api_key):
    transport = _CountingTransport(slow_puts=0.03)
    with MemoryClient(live_server.url, api_key, max_retries=4, transport=transport) as client:
        saver = client.langgraph_checkpointer
        calls = {"put": 0, "put_writes": 0}
        for name in calls:
            method = getattr(saver, name)

            def counted(*args, _method=method, _name=name, **kwargs):
                calls[_name] += 1
                return _method(*args, **kwargs)

            setattr(saver, name, counted)
        config = {"configurable": {"thread_id": "linear"}}
        ours = _linear_graph(saver)
        result = ours.invoke({"steps": []}, config)
        reference = _linear_graph(InMemorySaver())
        assert result == reference.invoke({"steps": []}, config)
        history = [(s.values, s.next, s.metadata["step"]) for s in ours.get_state_history(config)]
        assert history == [(s.values, s.next, s.metadata["step"]) for s in reference.get_state_history(config)]
    assert any(path.endswith("/batch") for path in transport.posts)
    assert len(transport.posts) < calls["put"] + calls["put_writes"]


def test_a_batch_with_one_refused_op_answers_each_op_alone(client):
    saver = client.langgraph_checkpointer
    config = {"configurable": {"thread_id": "mixed", "checkpoint_ns": "", "checkpoint_id": "0001"}}
    good = saver._writes_op(config, [("c", "v")], "task-1", "")
    bad = {**saver._writes_op(config, [("c", "v")], "task-2", ""), "thread_id": "a/b"}
    answers = saver._send([good, bad])
    assert answers[0] is None and isinstance(answers[1], MemoryValidationError)
    stored = saver.get_tuple({"configurable": {"thread_id": "mixed", "checkpoint_ns": "", "checkpoint_id": "0001"}})
    assert stored is None  # writes alone make no checkpoint ...
    assert client.get_conversation(conversation_id="mixed").source == "langgraph"  # ... but the good one was stored


def test_more_ops_than_a_batch_takes_go_in_several_batches(live_server, api_key):
    transport = _CountingTransport()
    with MemoryClient(live_server.url, api_key, max_retries=4, transport=transport) as client:
        saver = client.langgraph_checkpointer
        config = {"configurable": {"thread_id": "wide", "checkpoint_ns": "", "checkpoint_id": "0001"}}
        ops = [saver._writes_op(config, [("c", i)], f"task-{i}", "") for i in range(250)]
        assert saver._send(ops) == [{"written": 1}] * 250
    assert transport.posts.count("/v1/langgraph_checkpoints/batch") == 3


async def test_concurrent_async_graph_runs_share_one_saver_and_keep_their_own_histories(aclient):
    saver = aclient.langgraph_checkpointer
    ours, reference = _linear_graph(saver, length=6), _linear_graph(InMemorySaver(), length=6)
    configs = [{"configurable": {"thread_id": f"async-{n}"}} for n in range(5)]
    results = await asyncio.wait_for(asyncio.gather(*(ours.ainvoke({"steps": []}, c) for c in configs)), 60)
    expected = await reference.ainvoke({"steps": []}, configs[0])
    assert results == [expected] * 5
    for config in configs:
        history = [(s.values, s.next) async for s in ours.aget_state_history(config)]
        assert history == [(s.values, s.next) async for s in reference.aget_state_history(configs[0])]


def _scripted_saver(monkeypatch, answer):
    """A saver whose requests are answered by `answer(call)` (or its raise),
    sync and async alike; the paths it was asked for are recorded."""
    saver = MemoryClient("http://svc.test", "k").langgraph_checkpointer
    paths: list[str] = []

    def run(call):
        paths.append(call.path)
        return answer(call)

    async def arun(call):
        return run(call)

    monkeypatch.setattr(saver._conn, "run", run)
    monkeypatch.setattr(saver._conn, "arun", arun)
    return saver, paths


_OPS = [{"op": "put", "thread_id": "t", "checkpoint_id": "c1"},
        {"op": "put_writes", "thread_id": "t", "checkpoint_id": "c1", "writes": []}]


def test_a_server_without_the_batch_endpoint_is_sent_op_by_op_from_then_on(monkeypatch):
    from memory_client.errors import MemoryNotFoundError

    def answer(call):
        if call.path.endswith("/batch"):
            raise MemoryNotFoundError("no such route", status_code=404)
        return call.path

    saver, paths = _scripted_saver(monkeypatch, answer)
    assert saver._send(list(_OPS)) == ["langgraph_checkpoints", "langgraph_checkpoints/writes"]
    assert asyncio.run(saver._asend(list(_OPS))) == ["langgraph_checkpoints", "langgraph_checkpoints/writes"]
    assert paths == ["langgraph_checkpoints/batch", "langgraph_checkpoints", "langgraph_checkpoints/writes",
                     "langgraph_checkpoints", "langgraph_checkpoints/writes"]


def test_a_batch_that_fails_otherwise_fails_its_own_ops(monkeypatch):
    from memory_client.errors import MemoryConnectionError

    failure = MemoryConnectionError("connection refused")

    def answer(call):
        raise failure

    for send in ("sync", "async"):
        saver, paths = _scripted_saver(monkeypatch, answer)
        ops = [dict(op) for op in _OPS] * 60  # two chunks: 100 and 20
        results = saver._send(ops) if send == "sync" else asyncio.run(saver._asend(ops))
        assert results == [failure] * 120
        assert paths == ["langgraph_checkpoints/batch"] * 2  # not retried op by op
