"""The API's JSON renderer: DRF's `JSONRenderer`, its bytes written by orjson.

orjson writes a page of messages an order of magnitude faster than
DRF's `json.dumps` (bench/README.md). The answer is the same document: compact, UTF-8, U+2028/U+2029 escaped as DRF escapes
them. What orjson would write differently goes to DRF's own encoder
(datetimes, through `default`) or to DRF's renderer whole (integers beyond
64 bits, an `indent` asked for in the Accept header, non-compact settings).
One difference is left: a float that is not finite, which DRF refuses with
an error, is written as null. No stored value holds one (the parser refuses
them) and the service computes none.

(drf-orjson-renderer writes datetimes, non-ASCII line separators and
indentation its own way, so the same answers would change shape; this keeps
DRF's.)
"""

from __future__ import annotations

from typing import Any

import orjson
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.encoders import JSONEncoder

from memory_project.db import StoredJson

# Types json.dumps hands to DRF's encoder are handed to it here too (datetimes,
# dates and times), or refused as DRF refuses them (dataclasses), not written
# in orjson's own way.
_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_drf_encoder = JSONEncoder()


def _written_as_is(obj: Any) -> Any:
    # A stored JSON text (`memory_project.db.StoredJson`) goes in unread.
    if type(obj) is StoredJson:
        return orjson.Fragment(obj.text)
    return _drf_encoder.default(obj)


class _Encoder(JSONEncoder):
    """DRF's encoder, for what orjson leaves to DRF's renderer: a stored JSON
    text is decoded to be written in that renderer's way."""

    def default(self, obj: Any) -> Any:
        if type(obj) is StoredJson:
            return obj.value()
        return super().default(obj)


class ApiJSONRenderer(JSONRenderer):
    encoder_class = _Encoder

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None) -> bytes:
        if data is None:
            return b""
        if self.ensure_ascii or not self.compact or self.get_indent(accepted_media_type, renderer_context or {}):
            return super().render(data, accepted_media_type, renderer_context)
        try:
            written = orjson.dumps(data, default=_written_as_is, option=_OPTIONS)
        except TypeError:  # orjson.JSONEncodeError is one: an int past 64 bits, a type no one writes
            return super().render(data, accepted_media_type, renderer_context)
        # As DRF: JSON that is also a strict JavaScript subset.
        return written.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")
