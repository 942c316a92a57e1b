"""Errors the client raises, one class per error `type` of the service."""

from __future__ import annotations

from typing import Any


class MemoryServiceError(Exception):
    """Any error answered by the memory service (or reaching it)."""

    def __init__(self, message: str, *, status_code: int | None = None, error_type: str | None = None, body: Any = None):
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.error_type = error_type
        self.body = body


class MemoryValidationError(MemoryServiceError, ValueError):
    """400 `invalid_request_error` (and 413): the request was refused; nothing changed."""


class MemoryAuthenticationError(MemoryServiceError):
    """401: the API key is missing, invalid or revoked."""


class MemoryPermissionError(MemoryServiceError):
    """403: e.g. a read-only key attempted a write."""


class MemoryNotFoundError(MemoryServiceError, LookupError):
    """404."""


class MemoryConflictError(MemoryServiceError):
    """409: a stale version / content hash precondition, a taken path, a duplicate."""


class MemoryQuotaExceededError(MemoryServiceError):
    """A quota was reached (e.g. 10,000 messages in a conversation)."""


class MemoryRateLimitError(MemoryServiceError):
    """429 `rate_limit_error`: slow down (the client retries these itself first)."""


class MemoryServerError(MemoryServiceError):
    """5xx: the service failed or is unavailable."""


class MemoryConnectionError(MemoryServiceError):
    """The service could not be reached, or did not answer in time."""


def error_for(status_code: int, body: Any) -> MemoryServiceError:
    error = body.get("error") if isinstance(body, dict) else None
    error_type = error.get("type") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    message = message or f"HTTP {status_code}"
    if error_type == "quota_exceeded_error":
        cls: type[MemoryServiceError] = MemoryQuotaExceededError
    elif status_code in (400, 413, 422):
        cls = MemoryValidationError
    elif status_code == 401:
        cls = MemoryAuthenticationError
    elif status_code == 403:
        cls = MemoryPermissionError
    elif status_code == 404:
        cls = MemoryNotFoundError
    elif status_code == 409:
        cls = MemoryConflictError
    elif status_code == 429:
        cls = MemoryRateLimitError
    elif status_code >= 500:
        cls = MemoryServerError
    else:
        cls = MemoryServiceError
    return cls(message, status_code=status_code, error_type=error_type, body=body)
