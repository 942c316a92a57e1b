"""`claude_agent_sdk.SessionStore` over the memory service.

Each `(project_key, session_id)` is a conversation; its user / assistant lines
show up as the conversation's messages. The summary sidecar is folded here with
the SDK's own `fold_session_summary` and written with the entries in one
request, under the summary's version: a concurrent writer makes the request
fail with 409 and nothing is written, so the fold is redone on fresh state.
"""

from __future__ import annotations

import asyncio
from typing import Any

from claude_agent_sdk import SessionStore, fold_session_summary

from memory_client._transport import Call, nothing
from memory_client.adapters._connections import Connections
from memory_client.errors import MemoryConflictError

MAX_FOLD_ATTEMPTS = 5


def _key_body(key: dict[str, Any]) -> dict[str, Any]:
    body = {"project_key": key["project_key"], "session_id": key["session_id"]}
    if key.get("subpath") is not None:
        body["subpath"] = key["subpath"]
    return body


class MemorySessionStore(SessionStore):
    """Every method of the protocol, optional ones included."""

    def __init__(self, config: Any):
        self._conn = Connections(config)
        # (project_key, session_id) -> (summary, version) last seen; saves a read per append.
        self._summaries: dict[tuple[str, str], tuple[dict[str, Any] | None, int]] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    async def _summary(self, project_key: str, session_id: str) -> tuple[dict[str, Any] | None, int]:
        cached = self._summaries.get((project_key, session_id))
        if cached is not None:
            return cached
        data = await self._conn.arun(
            Call("GET", "claude_sessions/summary", params={"project_key": project_key, "session_id": session_id})
        )
        return data["summary"], data["summary_version"]

    async def append(self, key: dict[str, Any], entries: list[dict[str, Any]]) -> None:
        if not entries:
            return
        body = {**_key_body(key), "entries": list(entries)}
        if key.get("subpath") is not None:
            # No summary for subagent streams: one request, uuids make a replay harmless.
            await self._conn.arun(Call("POST", "claude_sessions/append", json=body, retry=True))
            return
        ident = (key["project_key"], key["session_id"])
        lock = self._locks.setdefault(ident, asyncio.Lock())
        async with lock:
            for attempt in range(MAX_FOLD_ATTEMPTS):
                previous, version = await self._summary(*ident)
                folded = fold_session_summary(previous, key, entries)
                body["summary"] = {"data": folded["data"], "expected_version": version}
                try:
                    result = await self._conn.arun(Call("POST", "claude_sessions/append", json=body, retry=False))
                except MemoryConflictError:
                    self._summaries.pop(ident, None)
                    if attempt == MAX_FOLD_ATTEMPTS - 1:
                        raise
                    continue
                self._summaries[ident] = (result["summary"], result["summary_version"])
                return

    async def load(self, key: dict[str, Any]) -> list[dict[str, Any]] | None:
        return await self._conn.arun(Call("GET", "claude_sessions/entries", params=_key_body(key)))

    async def list_sessions(self, project_key: str) -> list[dict[str, Any]]:
        return await self._conn.arun(Call("GET", "claude_sessions", params={"project_key": project_key}))

    async def list_session_summaries(self, project_key: str) -> list[dict[str, Any]]:
        return await self._conn.arun(Call("GET", "claude_sessions/summaries", params={"project_key": project_key}))

    async def delete(self, key: dict[str, Any]) -> None:
        # Deleting twice is deleting once: safe to retry.
        await self._conn.arun(Call("POST", "claude_sessions/delete", json=_key_body(key), parse=nothing, retry=True))
        if key.get("subpath") is None:
            self._summaries.pop((key["project_key"], key["session_id"]), None)

    async def list_subkeys(self, key: dict[str, Any]) -> list[str]:
        params = {"project_key": key["project_key"], "session_id": key["session_id"]}
        return await self._conn.arun(Call("GET", "claude_sessions/subkeys", params=params))
