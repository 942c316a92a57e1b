"""Validation shared by the framework services."""

from __future__ import annotations

import time
from typing import Any

from memory_project.errors import ValidationError


def now_ms() -> int:
    return int(time.time() * 1000)


def clean_text(value: Any, *, field: str, max_bytes: int, allow_empty: bool = False) -> str:
    """A string of at most `max_bytes` UTF-8 bytes without NUL (PostgreSQL refuses it in text)."""
    if not isinstance(value, str) or (not value and not allow_empty):
        raise ValidationError(f"{field}: must be a {'' if allow_empty else 'non-empty '}string.")
    if len(value.encode("utf-8")) > max_bytes:
        raise ValidationError(f"{field}: must be at most {max_bytes} bytes of UTF-8.")
    if "\x00" in value:
        raise ValidationError(f"{field}: must not contain NUL characters.")
    return value


def clean_list(value: Any, *, field: str, max_items: int) -> list[Any]:
    if not isinstance(value, list):
        raise ValidationError(f"{field}: must be an array.")
    if len(value) > max_items:
        raise ValidationError(f"{field}: at most {max_items} items per request.")
    return value


def contains_nul(value: Any) -> bool:
    """Whether a JSON value holds a NUL character anywhere (PostgreSQL's jsonb refuses \\u0000)."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(contains_nul(k) or contains_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(contains_nul(v) for v in value)
    return False
