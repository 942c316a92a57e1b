"""HTTP connections for adapters that speak both sync and async.

An `httpx.AsyncClient` belongs to the event loop it first ran on, so async
calls get one client per running loop (frameworks and test runners may run
each session on a fresh loop).
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any

import httpx

from memory_client._transport import Call, RetryPolicy, run_async, run_sync


class Connections:
    def __init__(self, config: Any):
        self.config = config
        self.policy = RetryPolicy(max_retries=config.max_retries)
        self._sync: httpx.Client | None = None
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def sync(self) -> httpx.Client:
        with self._lock:
            if self._sync is None:
                self._sync = self.config.sync_http()
            return self._sync

    def aclient(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._async.get(loop)
            if client is None:
                client = self.config.async_http()
                self._async[loop] = client
            return client

    def run(self, call: Call) -> Any:
        return run_sync(self.sync(), call, self.policy)

    async def arun(self, call: Call) -> Any:
        return await run_async(self.aclient(), call, self.policy)

    def close(self) -> None:
        if self._sync is not None:
            self._sync.close()
            self._sync = None
