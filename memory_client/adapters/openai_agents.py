"""`agents` (OpenAI Agents SDK) `Session` over the memory service.

The session id is a conversation id and its items are the conversation's
messages; `add_items` appends a batch atomically (all or none, in order), up to
1000 items (more go in several such batches).
"""

from __future__ import annotations

import uuid
from typing import Any

from agents.memory.session_settings import SessionSettings

from memory_client._transport import Call, nothing, seg, with_idempotency_key
from memory_client.adapters._connections import Connections

# The most items the service adds in one request.
ITEMS_PER_REQUEST = 1000


class MemoryOpenAISession:
    """Implements the `agents.memory.Session` protocol (async only, as the protocol is)."""

    def __init__(
        self, config: Any, session_id: str, *, max_items: int | None = None, session_settings: SessionSettings | None = None
    ):
        self.session_id = session_id
        if session_settings is None and max_items is not None:
            session_settings = SessionSettings(limit=max_items)
        self.session_settings = session_settings
        self._conn = Connections(config)
        self._path = f"openai_sessions/{seg(session_id)}/items"

    async def get_items(self, limit: int | None = None) -> list[Any]:
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        if limit is not None and limit == 0:
            return []
        # A negative limit means "no limit", as in the SDK's SQLiteSession.
        params = {"limit": limit} if limit is not None and limit > 0 else None
        return await self._conn.arun(Call("GET", self._path, params=params))

    async def add_items(self, items: list[Any]) -> None:
        """The items in order: all or none when there are at most
        `ITEMS_PER_REQUEST` (one request); more go in several requests of
        that many, each all or none, in order, so one that fails leaves the
        earlier ones added."""
        items = list(items)
        for start in range(0, len(items), ITEMS_PER_REQUEST):
            call = Call("POST", self._path, json={"items": items[start : start + ITEMS_PER_REQUEST]}, parse=nothing)
            # The key makes a retried batch a replay on the server, never a second copy.
            await self._conn.arun(with_idempotency_key(call, f"oais-{uuid.uuid4().hex}"))

    async def pop_item(self) -> Any | None:
        # Not retried: a pop that reached the server must not pop twice.
        return await self._conn.arun(Call("POST", f"{self._path}/pop", retry=False))

    async def clear_session(self) -> None:
        await self._conn.arun(Call("DELETE", self._path, parse=nothing))

    async def aclose(self) -> None:
        """Close the connection this event loop uses (it is closed anyway when the loop finishes)."""
        await self._conn.aclose()

    def close(self) -> None:
        self._conn.close()
