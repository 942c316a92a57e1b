"""The field rules of spec 003's memory items, shared by every write path.

Decisions (spec 003 leaves them open):

- `content` is text or `{"text": "..."}` (nothing else in the object); it must
  hold a non-blank character and at most 100 KB (102,400 bytes of UTF-8).
- `fact_key` is normalized (trimmed, inner whitespace collapsed, lower case;
  empty becomes null) and kept only on facts: any other type clears it.
- `due_date` (YYYY-MM-DD) is kept only on open loops: any other type clears it.
- `metadata` is the caller's JSON object (any values), at most 64 keys of 1
  to 128 characters and 16 KB serialized; null means `{}`. An update
  replaces the whole object.
- `summary_tier` is kept only on summaries: any other type clears it, whether
  the request changes the type or only sends a tier (as spec 003 says).
- `status` drives `lifecycle_status`: `deprecated` makes it `deprecated`;
  `active` revives a `deprecated` lifecycle, approves a `pending` one, and
  leaves `compacted` alone (re-activating the compat status does not
  un-compact). `lifecycle_status` alone never rewrites `status` (spec 003),
  even to `deprecated`.
- A pending memory (awaiting review) reports `status: "pending"`, never
  `active` (`reported_status`); the stored compat column keeps `active`. As
  input, `status=pending` sends a memory (back) to review.
- Both sent in one request must agree, else 409: `status=active` goes with
  `active|compacted|pending`, `status=deprecated` only with `deprecated`,
  `status=pending` only with `pending`.
- `pending` may be entered by anyone, but releasing a memory that was never
  approved (it is `pending`, or it was rejected from review and is
  `deprecated`) into `active` or `compacted` is an approval, reserved to
  operators (staff users) and the system; agents and jobs get 409, on every
  route (single and batch writes, restore).
- Scope `store` and type `document` belong to memory stores and are refused
  here (400): they are written through the stores API.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from accounts.actors import Actor
from memories.models import MAX_CONTENT_BYTES, LifecycleStatus, MemoryType, Scope, Status, SummaryTier
from memory_project.errors import ConflictError, ValidationError

MAX_FACT_KEY_CHARS = 255
MAX_METADATA_KEYS = 64
MAX_METADATA_KEY_CHARS = 128
MAX_METADATA_BYTES = 16 * 1024
MAX_SOURCE_ID_CHARS = 64
ITEM_SCOPES = (Scope.GLOBAL, Scope.USER, Scope.CHAT, Scope.BRANCH, Scope.FLOOR)
ITEM_TYPES = (MemoryType.FACT, MemoryType.SUMMARY, MemoryType.OPEN_LOOP)
APPROVER_KINDS = ("user", "system")
# The compat status a pending memory reports (and may be given as input).
REPORTED_PENDING = "pending"
STATUS_INPUTS = (*Status.values, REPORTED_PENDING)
RELEASED_LIFECYCLES = (LifecycleStatus.ACTIVE, LifecycleStatus.COMPACTED)
_STATUS_LIFECYCLES = {
    Status.ACTIVE: {LifecycleStatus.ACTIVE, LifecycleStatus.COMPACTED, LifecycleStatus.PENDING},
    Status.DEPRECATED: {LifecycleStatus.DEPRECATED},
}


def clean_content(value: Any) -> str:
    if isinstance(value, dict):
        if set(value) != {"text"} or not isinstance(value["text"], str):
            raise ValidationError('content: must be a string or {"text": "..."} with nothing else.')
        value = value["text"]
    if not isinstance(value, str):
        raise ValidationError('content: must be a string or {"text": "..."}.')
    if not value.strip():
        raise ValidationError("content: must not be blank.")
    if len(value.encode("utf-8")) > MAX_CONTENT_BYTES:
        raise ValidationError(f"content: at most {MAX_CONTENT_BYTES} bytes of UTF-8.")
    if "\x00" in value:
        raise ValidationError("content: must not contain NUL characters.")
    return value


def normalize_fact_key(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError("fact_key: must be a string or null.")
    normalized = " ".join(value.split()).lower()
    if len(normalized) > MAX_FACT_KEY_CHARS:
        raise ValidationError(f"fact_key: at most {MAX_FACT_KEY_CHARS} characters.")
    return normalized or None


def _choice(name: str, value: Any, choices) -> str:
    allowed = [str(choice) for choice in choices]
    if value not in allowed:
        raise ValidationError(f"{name}: must be one of {', '.join(allowed)}.")
    return value


def clean_scope(value: Any) -> str:
    if value == Scope.STORE:
        raise ValidationError("scope: 'store' memories are written through /v1/memory_stores.")
    return _choice("scope", value, ITEM_SCOPES)


def clean_type(value: Any) -> str:
    if value == MemoryType.DOCUMENT:
        raise ValidationError("type: 'document' memories are written through /v1/memory_stores.")
    return _choice("type", value, ITEM_TYPES)


def clean_metadata(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValidationError("metadata: must be an object, or null.")
    if len(value) > MAX_METADATA_KEYS:
        raise ValidationError(f"metadata: at most {MAX_METADATA_KEYS} keys.")
    for key in value:
        if not isinstance(key, str) or not 1 <= len(key) <= MAX_METADATA_KEY_CHARS:
            raise ValidationError(f"metadata: keys must be 1 to {MAX_METADATA_KEY_CHARS} characters.")
    try:
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError, RecursionError):
        raise ValidationError("metadata: must hold JSON values only.") from None
    if size > MAX_METADATA_BYTES:
        raise ValidationError(f"metadata: {size} bytes serialized; the limit is {MAX_METADATA_BYTES} bytes.")
    return value


def clean_due_date(value: Any) -> date | None:
    """An open loop's due day: an ISO date (`2026-12-04`) or null."""
    if value is None or (isinstance(value, date) and not isinstance(value, datetime)):
        return value
    if isinstance(value, str) and len(value) == 10:
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise ValidationError("due_date: must be a day as YYYY-MM-DD, or null.")


def clean_optional_text(name: str, value: Any, max_chars: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > max_chars:
        raise ValidationError(f"{name}: must be a string of at most {max_chars} characters, or null.")
    return value


MAX_SOURCES = 10_000  # a conversation's whole length


def clean_sources(value: Any) -> list[str]:
    """Message ids a memory was made from: a list of distinct ids (order kept)."""
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_SOURCES or not all(
            isinstance(v, str) and v and len(v) <= MAX_SOURCE_ID_CHARS for v in value):
        raise ValidationError(f"sources: must be a list of at most {MAX_SOURCES} message ids "
                              f"(strings of 1 to {MAX_SOURCE_ID_CHARS} characters).")
    return list(dict.fromkeys(value))


def clean_unit_float(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValidationError(f"{name}: must be a number between 0 and 1.")
    if not 0 <= value <= 1:
        raise ValidationError(f"{name}: must be between 0 and 1.")
    return float(value)


def clean_optional_count(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**31 - 1:
        raise ValidationError(f"{name}: must be a non-negative integer or null.")
    return value


def clean_summary_tier(value: Any) -> str | None:
    if value is None:
        return None
    return _choice("summary_tier", value, SummaryTier.values)


def clean_status(value: Any) -> str:
    return _choice("status", value, STATUS_INPUTS)


def reported_status(status: str, lifecycle_status: str) -> str:
    """The compat status a client sees: `pending` while awaiting review."""
    return REPORTED_PENDING if lifecycle_status == LifecycleStatus.PENDING else status


def clean_lifecycle(value: Any) -> str:
    return _choice("lifecycle_status", value, LifecycleStatus.values)


def resolve_statuses(
    *,
    current_status: str | None,
    current_lifecycle: str | None,
    status: str | None,
    lifecycle: str | None,
    actor: Actor,
    never_released: Callable[[], bool] | None = None,
) -> tuple[str, str]:
    """The (status, lifecycle_status) after a write; `None` means "not sent".
    `current_*` are None on create. `never_released`: asked (only when it
    matters) whether a `deprecated` memory was never `active` nor `compacted`,
    i.e. it was rejected in review and reviving it would be an approval."""
    if status == REPORTED_PENDING:
        if lifecycle not in (None, LifecycleStatus.PENDING):
            raise ConflictError(f"status 'pending' cannot go with lifecycle_status '{lifecycle}'.")
        status, lifecycle = Status.ACTIVE, LifecycleStatus.PENDING
    elif status is not None and lifecycle is not None and lifecycle not in _STATUS_LIFECYCLES[status]:
        raise ConflictError(f"status '{status}' cannot go with lifecycle_status '{lifecycle}'.")
    new_status = status or current_status or Status.ACTIVE
    if lifecycle is not None:
        new_lifecycle = lifecycle
    elif status == Status.DEPRECATED:
        new_lifecycle = LifecycleStatus.DEPRECATED
    elif status == Status.ACTIVE:
        keep = current_lifecycle == LifecycleStatus.COMPACTED
        new_lifecycle = current_lifecycle if keep else LifecycleStatus.ACTIVE
    else:
        new_lifecycle = current_lifecycle or LifecycleStatus.ACTIVE
    if new_lifecycle in RELEASED_LIFECYCLES and actor.kind not in APPROVER_KINDS:
        unapproved = current_lifecycle == LifecycleStatus.PENDING or (
            current_lifecycle == LifecycleStatus.DEPRECATED and never_released is not None and never_released()
        )
        if unapproved:
            raise ConflictError("A memory awaiting review is approved by an operator, not through the API.")
    return new_status, new_lifecycle


