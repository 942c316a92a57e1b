"""The one cheap token estimate, for what is stored with a message
(`Message.token_estimate`) and a memory (`MemoryItem.token_count_estimate`)
and the budgets read from them. Where a count must be exact (the recall
tool's `max_tokens`, context packing), `memories.llm.tokens.count_tokens`
counts with the model's own encoding instead."""

from __future__ import annotations

import json
from typing import Any

# Characters from the CJK radicals on count a token each; text below them
# (Latin, Cyrillic, ...) runs about four characters a token.
WIDE_FROM = 0x2E80


def estimate_tokens(content: Any) -> int:
    """A message's or a memory's tokens, estimated: a string as it is, other
    content as its JSON text."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    # Most texts are ASCII: skip the per-character scan for them.
    wide = 0 if text.isascii() else sum(1 for ch in text if ord(ch) >= WIDE_FROM)
    return wide + (len(text) - wide + 3) // 4
