"""`agents` (OpenAI Agents SDK) `Session` over the memory service.

The session id is a conversation id and its items are the conversation's
messages; `add_items` appends a batch atomically (all or none, in order), up to
1000 items and 50 MB (more go in several such batches).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

from agents.memory.session_settings import SessionSettings

from memory_client._transport import Call, nothing, seg, with_idempotency_key
from memory_client.adapters._connections import Connections

# The most items the service adds in one request, and the most bytes of them
# sent in one (the service refuses a body over 52 MB and 64 KB).
ITEMS_PER_REQUEST = 1000
BYTES_PER_REQUEST = 50 * 1024 * 1024


def _requests(items: list[Any]) -> Iterator[list[Any]]:
    """The items in consecutive groups of at most `ITEMS_PER_REQUEST` whose
    JSON (as the client writes it) stays within `BYTES_PER_REQUEST`. An item
    larger than that goes alone: the service's answer says what is wrong."""
    group: list[Any] = []
    size = 0
    for item in items:
        item_size = len(json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode()) + 1
        if group and (len(group) == ITEMS_PER_REQUEST or size + item_size > BYTES_PER_REQUEST):
            yield group
            group, size = [], 0
        group.append(item)
        size += item_size
    if group:
        yield group


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
        """The items in order: all or none when they fit one request (at
        most `ITEMS_PER_REQUEST` items and `BYTES_PER_REQUEST`); more go in
        several requests, each all or none, in order, so one that fails
        leaves the earlier ones added."""
        for group in _requests(list(items)):
            call = Call("POST", self._path, json={"items": group}, parse=nothing)
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
