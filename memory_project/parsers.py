"""The API's one JSON parser, hardened against hostile bodies.

DRF's stock `JSONParser` decodes with whatever charset the client names, lets a
deeply nested body reach the recursive decoder (a `RecursionError`, hence a
500), accepts `NaN`/`Infinity`, and reads the stream without the
`DATA_UPLOAD_MAX_MEMORY_SIZE` check Django applies to `request.body`. It also
lets through strings no database column can hold: PostgreSQL refuses NUL in
text and jsonb, and a lone surrogate (`"\\ud800"`) cannot be encoded as UTF-8.
Every one of those is answered here with a 400 (or 413) before a view runs.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser
from rest_framework.renderers import JSONRenderer

from memory_project.errors import PayloadTooLargeError

# Deep enough for any real message content (tool calls inside content blocks,
# LangGraph checkpoints), shallow enough that walking it is cheap and the
# recursive decoder never gets near the interpreter's recursion limit.
DEFAULT_MAX_DEPTH = 64

# NUL and the UTF-16 surrogate range: storable in neither a UTF-8 string nor
# PostgreSQL's text/jsonb, so refused wherever they appear (keys included).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def max_json_depth() -> int:
    return int(getattr(settings, "JSON_MAX_DEPTH", DEFAULT_MAX_DEPTH))


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        # `1e999` decodes to inf: as unrepresentable as a literal Infinity.
        raise ValueError("numbers must be finite.")
    return number


def _check_depth(node: Any, max_depth: int, depth: int = 1) -> None:
    """ParseError when `node` nests deeper than `max_depth`. Recursive, but
    never deeper than `max_depth` (64) frames: it stops there."""
    kind = type(node)
    if kind is not dict and kind is not list:
        return
    if depth > max_depth:
        raise ParseError(f"JSON parse error - nesting deeper than {max_depth} levels.")
    for item in node.values() if kind is dict else node:
        item_kind = type(item)
        if item_kind is dict or item_kind is list:  # a call per container, none per scalar
            _check_depth(item, max_depth, depth + 1)


def _check_strings(value: Any) -> None:
    """ParseError when a string or key in `value` holds NUL or a lone surrogate."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if _UNSTORABLE.search(node):
                raise ParseError("JSON parse error - strings may not contain NUL characters or lone surrogates.")
        elif isinstance(node, dict):
            for key, item in node.items():
                if _UNSTORABLE.search(key):
                    raise ParseError("JSON parse error - keys may not contain NUL characters or lone surrogates.")
                stack.append(item)
        elif isinstance(node, list):
            stack.extend(node)


def decode_json_bytes(raw: bytes, *, max_depth: int | None = None) -> Any:
    """Strict UTF-8 JSON bytes -> Python value, or ParseError."""
    limit = max_depth if max_depth is not None else max_json_depth()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"JSON parse error - the body is not valid UTF-8 (byte {exc.start}).")
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise ParseError(f"JSON parse error - nesting deeper than {limit} levels.")
    except ValueError as exc:
        raise ParseError(f"JSON parse error - {exc}")
    # Numbers were checked as they were decoded. A text with fewer brackets
    # than the limit cannot nest that deep, and a string can only hold NUL or
    # a lone surrogate through a \u escape: the decoder refuses raw control
    # characters in strings, and strict UTF-8 decoding refuses encoded
    # surrogates. So most bodies need no walk at all (bench/README.md).
    if text.count("{") + text.count("[") > limit:
        _check_depth(value, limit)
    if "\\u" in text:
        _check_strings(value)
    return value


class StrictJSONParser(BaseParser):
    """`application/json`, UTF-8 only (RFC 8259), size- and depth-bounded."""

    media_type = "application/json"
    renderer_class = JSONRenderer

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        parser_context = parser_context or {}
        encoding = str(parser_context.get("encoding") or "utf-8").lower().replace("_", "-")
        if encoding not in {"utf-8", "utf8"}:
            raise ParseError(f'Unsupported charset "{encoding}": JSON bodies must be UTF-8.')
        if stream is None:
            raise ParseError("JSON parse error - empty body.")
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        # Read one byte past the limit: a body without a Content-Length (or one
        # that lies about it) is still cut off here instead of filling memory.
        raw = stream.read(limit + 1) if limit is not None else stream.read()
        if limit is not None and len(raw) > limit:
            raise PayloadTooLargeError(f"Request body is larger than {limit} bytes.")
        return decode_json_bytes(raw)
