"""HTTP connections for adapters that speak both sync and async.

An `httpx.AsyncClient` belongs to the event loop it first ran on, so async
calls get one client per running loop (frameworks and test runners may run
each session on a fresh loop). A loop's client is closed when the loop shuts
down its async generators (`asyncio.run` and `asyncio.Runner` do as they
finish), so connections do not outlive the loop that opened them.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Any, TypeVar

import httpx

from memory_client._transport import Call, RetryPolicy, run_async, run_sync

T = TypeVar("T")


async def _close_at_loop_shutdown(client: httpx.AsyncClient, forget: Callable[[], Any]) -> AsyncGenerator[None, None]:
    # Started once and left suspended: the loop's shutdown_asyncgens() closes
    # it, which runs the finally on the loop that owns the client. Forgetting
    # the entry there matters: this generator refers to its loop, so while it
    # is held the loop could never be freed.
    try:
        yield
    finally:
        forget()
        await client.aclose()


class Connections:
    def __init__(self, config: Any):
        self.config = config
        self.policy = RetryPolicy(max_retries=config.max_retries)
        self._sync: httpx.Client | None = None
        # loop -> (its client, the generator that closes it with the loop)
        self._async: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[httpx.AsyncClient, AsyncGenerator[None, None]]
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def sync(self) -> httpx.Client:
        with self._lock:
            if self._sync is None:
                self._sync = self.config.sync_http()
            return self._sync

    async def aclient(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        with self._lock:
            held = self._async.get(loop)
            if held is not None:
                return held[0]
            client = self.config.async_http()
            closer = _close_at_loop_shutdown(client, lambda: self._async.pop(loop, None))
            self._async[loop] = (client, closer)
        await closer.__anext__()
        return client

    def run(self, call: Call) -> Any:
        return run_sync(self.sync(), call, self.policy)

    async def arun(self, call: Call) -> Any:
        return await run_async(await self.aclient(), call, self.policy)

    def run_flow(self, flow: Generator[Call, Any, T]) -> T:
        """Run a flow of calls to its end: a generator that yields each call
        and is sent its answer, or has its error thrown in (so the flow's
        policy is written once for sync and async callers); its return value."""
        try:
            call = next(flow)
            while True:
                try:
                    answer = self.run(call)
                except Exception as exc:
                    call = flow.throw(exc)
                else:
                    call = flow.send(answer)
        except StopIteration as stop:
            return stop.value

    async def arun_flow(self, flow: Generator[Call, Any, T]) -> T:
        """`run_flow` for async callers."""
        try:
            call = next(flow)
            while True:
                try:
                    answer = await self.arun(call)
                except Exception as exc:
                    call = flow.throw(exc)
                else:
                    call = flow.send(answer)
        except StopIteration as stop:
            return stop.value

    async def aclose(self) -> None:
        """Close this loop's client now (other loops' close as they shut down)."""
        held = self._async.pop(asyncio.get_running_loop(), None)
        if held is not None:
            await held[1].aclose()

    def close(self) -> None:
        if self._sync is not None:
            self._sync.close()
            self._sync = None
