"""Every REST operation, described once as a `Call`; `MemoryClient` and
`AsyncMemoryClient` run the same descriptions over httpx (sync / async).
One module per part of the API: `conversations` (spec 000), `memory_items`
(spec 003), `stores` (memory stores and agent tools, specs 001 / 004); each
names its operations in `PUBLIC`, all of them are importable from here."""

from __future__ import annotations

from memory_client._operations import conversations, memory_items, stores
from memory_client._operations.conversations import *  # noqa: F403
from memory_client._operations.memory_items import *  # noqa: F403
from memory_client._operations.stores import *  # noqa: F403

# The operations `MemoryClient` and `AsyncMemoryClient` expose as methods.
PUBLIC = [*conversations.PUBLIC, *memory_items.PUBLIC, *stores.PUBLIC]
