"""Opaque page cursors and query-parameter parsing for the memory-store dialect.

A list answers `{"data": [...], "next_page": <token or null>}` and the next
request sends `?page=<token>`. The token is a signed keyset position: signing
makes a forged or truncated token a clean 400 instead of a bad query, and the
`kind` salt keeps a token from one list from being replayed on another.
"""

from __future__ import annotations

from datetime import UTC, datetime, time
from typing import Any

from django.core import signing
from django.utils.dateparse import parse_date, parse_datetime

from memory_project.errors import ValidationError
from memory_project.instants import clamped_utc

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
# A page with `view=full` carries content (up to 100 kB per memory), so it is
# capped well below MAX_LIMIT to bound the response size.
MAX_FULL_VIEW_LIMIT = 20
VIEWS = ("basic", "full")
_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


def encode_page(kind: str, position: dict[str, Any]) -> str:
    return signing.dumps(position, salt=f"memory-store-page:{kind}", compress=False)


def decode_page(kind: str, token: str | None) -> dict[str, Any] | None:
    if token in (None, ""):
        return None
    try:
        position = signing.loads(token, salt=f"memory-store-page:{kind}")
    except signing.BadSignature:
        raise ValidationError("page: not a valid page token for this list.")
    if not isinstance(position, dict):
        raise ValidationError("page: not a valid page token for this list.")
    return position


# A parameter that is present must be valid: `?limit=` is a 400, not the default.


def parse_limit(params, *, view: str = "basic") -> int:
    raw = params.get("limit")
    if raw is None:
        limit = DEFAULT_LIMIT
    else:
        try:
            limit = int(raw)
        except (TypeError, ValueError):
            raise ValidationError("limit must be an integer from 1 to 100.")
        if not 1 <= limit <= MAX_LIMIT:
            raise ValidationError("limit must be an integer from 1 to 100.")
    if view == "full":
        limit = min(limit, MAX_FULL_VIEW_LIMIT)
    return limit


def parse_view(params, *, default: str) -> str:
    view = params.get("view", default)
    if view not in VIEWS:
        raise ValidationError("view must be 'basic' or 'full'.")
    return view


def parse_bool(params, name: str, *, default: bool = False) -> bool:
    raw = params.get(name)
    if raw is None:
        return default
    value = str(raw).strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValidationError(f"{name} must be true or false.")


# No integer parameter is unbounded: one past what any column or loop can use
# would otherwise reach the database (an overflow there is a 500).
MAX_INT_PARAM = 1_000_000


def parse_int(params, name: str, *, default: int, minimum: int = 0, maximum: int = MAX_INT_PARAM) -> int:
    raw = params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ValidationError(f"{name} must be an integer.")
    if value < minimum:
        raise ValidationError(f"{name} must be at least {minimum}.")
    if value > maximum:
        raise ValidationError(f"{name} must be at most {maximum}.")
    return value


def _parse_instant(raw: str, name: str, *, end_of_day: bool) -> datetime:
    value = raw.strip().replace(" ", "+")  # a '+' offset often arrives URL-decoded as a space
    try:
        parsed = parse_datetime(value)
    except ValueError:
        parsed = None
    if parsed is None:
        try:
            day = parse_date(value)
        except ValueError:
            day = None
        if day is None:
            raise ValidationError(f"{name} must be an RFC 3339 date-time.")
        parsed = datetime.combine(day, time.max if end_of_day else time.min)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return clamped_utc(parsed)


def parse_created_range(params) -> tuple[datetime | None, datetime | None]:
    """`created_at[gte]` / `created_at[lte]` (what the SDK sends); the plain
    `created_at_gte` / `created_at_lte` spelling is accepted too."""
    bounds: list[datetime | None] = []
    for op in ("gte", "lte"):
        raw = params.get(f"created_at[{op}]", params.get(f"created_at_{op}"))
        bounds.append(None if raw is None else _parse_instant(raw, f"created_at[{op}]", end_of_day=op == "lte"))
    return bounds[0], bounds[1]


def page_response(data: list[dict[str, Any]], next_page: str | None) -> dict[str, Any]:
    return {"data": data, "next_page": next_page}
