"""Validation shared by the conversation services: ids, roles, content, names."""

from __future__ import annotations

import json
import re
from typing import Any

from conversations.models import MAX_CONTENT_BYTES, MAX_CONVERSATION_ID_BYTES, Role
from memory_project.errors import ValidationError


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()

MAX_IDEMPOTENCY_KEY_CHARS = 255
MAX_BRANCH_NAME_CHARS = 128
MAX_USER_ID_CHARS = 256


# C0 controls, DEL and C1 controls. A compiled class, not a per-character
# loop: ids are checked on every call that names a conversation.
_CONTROL_CHARS = re.compile("[\x00-\x1f\x7f-\x9f]")


def has_control_chars(value: str) -> bool:
    return _CONTROL_CHARS.search(value) is not None


def validate_conversation_id(external_id: Any, *, field: str = "conversation_id") -> str:
    """A caller's conversation id: 1..256 bytes of UTF-8 that survive a URL path.

    Any character may be used (percent-encoded by the client) except `/`,
    control characters and the dot segments `.` / `..`, which HTTP clients and
    servers rewrite before the request reaches us. `field` is the name the
    caller gave it (a LangGraph thread id, an OpenAI session id).
    """
    if not isinstance(external_id, str) or not external_id:
        raise ValidationError(f"{field}: must be a non-empty string.")
    if len(external_id.encode("utf-8")) > MAX_CONVERSATION_ID_BYTES:
        raise ValidationError(f"{field}: must be at most {MAX_CONVERSATION_ID_BYTES} bytes of UTF-8.")
    if "/" in external_id:
        raise ValidationError(f"{field}: must not contain '/' (it cannot travel in a URL path segment).")
    if has_control_chars(external_id):
        raise ValidationError(f"{field}: must not contain control characters.")
    if external_id in {".", ".."}:
        raise ValidationError(f"{field}: '.' and '..' are not allowed (URL dot segments).")
    return external_id


def validate_user_id(user_id: Any) -> str | None:
    if user_id is None:
        return None
    if not isinstance(user_id, str) or not user_id or len(user_id) > MAX_USER_ID_CHARS:
        raise ValidationError(f"user_id: must be a non-empty string of at most {MAX_USER_ID_CHARS} characters.")
    return user_id


def validate_metadata(metadata: Any, *, name: str = "metadata") -> dict[str, Any]:
    if not isinstance(metadata, dict):
        raise ValidationError(f"{name}: must be an object.")
    return metadata


def validate_role(role: Any, *, name: str = "role") -> str:
    if role not in Role.values:
        raise ValidationError(f"{name}: must be one of {', '.join(Role.values)}.")
    return role


def content_size(content: Any, *, name: str = "content") -> int:
    """Serialized size in bytes (compact JSON, UTF-8), the unit of the 50 MB limit."""
    if isinstance(content, bool) or not isinstance(content, (str, list, dict)):
        raise ValidationError(f"{name}: must be a string, an array or an object.")
    return len(json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def validate_content(content: Any, *, name: str = "content") -> int:
    size = content_size(content, name=name)
    if size > MAX_CONTENT_BYTES:
        raise ValidationError(f"{name}: {size} bytes serialized; the limit is {MAX_CONTENT_BYTES} bytes.")
    return size


def validate_idempotency_key(key: Any, *, name: str = "Idempotency-Key") -> str | None:
    if key is None:
        return None
    if not isinstance(key, str) or not key or len(key) > MAX_IDEMPOTENCY_KEY_CHARS:
        raise ValidationError(f"{name}: must be 1..{MAX_IDEMPOTENCY_KEY_CHARS} characters.")
    return key


def validate_branch_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_BRANCH_NAME_CHARS:
        raise ValidationError(f"branch: must be a non-empty name of at most {MAX_BRANCH_NAME_CHARS} characters.")
    if has_control_chars(name):
        raise ValidationError("branch: must not contain control characters.")
    return name


