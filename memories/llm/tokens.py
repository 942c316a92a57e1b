"""Real token counts, offline.

`bpe-openai` bundles OpenAI's BPE tables, so counting needs no download at run
time. `o200k_base` is the encoding of current OpenAI chat models; for other
providers it is a close, stable proxy, which is all a budget needs.
"""

from __future__ import annotations

import functools
import json
from typing import Any

ENCODING_NAME = "o200k_base"
# Beyond this many characters the count is extrapolated from a sample: a 50 MB
# message must not cost seconds of BPE just to size a budget.
EXACT_LIMIT_CHARS = 200_000


@functools.lru_cache(maxsize=1)
def _encoding():
    import bpe_openai

    return bpe_openai.get_encoding(ENCODING_NAME)


def count_tokens(text: str | None) -> int:
    """Tokens of `text` under `o200k_base` (special-token markers count as plain text)."""
    if not text:
        return 0
    if len(text) <= EXACT_LIMIT_CHARS:
        return len(_encoding().encode_ordinary(text))
    sample = text[:EXACT_LIMIT_CHARS]
    sampled = len(_encoding().encode_ordinary(sample))
    return int(sampled * len(text) / len(sample)) + 1


def content_text(content: Any) -> str:
    """The readable text of a message's content: a string, a list of blocks
    (text blocks kept; tool calls and their results dropped) or an object."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                kind = block.get("type")
                if kind in {"text", "input_text", "output_text"} and isinstance(block.get("text"), str):
                    parts.append(block["text"])
        return "\n".join(parts)
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return content["text"]
        return ""
    return str(content)


def count_content_tokens(content: Any) -> int:
    """Tokens of a message's content as it would be sent (JSON for structures)."""
    if isinstance(content, str):
        return count_tokens(content)
    return count_tokens(json.dumps(content, ensure_ascii=False, separators=(",", ":")))
