"""Typed domain errors with stable codes.

Services raise these; the one exception handler in `memory_project.api` renders
them as `{"type": "error", "error": {"type": <code>, "message": ...}}`. Views
never catch them.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    status_code: int = 400
    code: str = "invalid_request_error"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.message = message
        self.details = details or {}
        self.headers = headers or {}


class ValidationError(DomainError):
    status_code = 400
    code = "invalid_request_error"


class AuthenticationError(DomainError):
    status_code = 401
    code = "authentication_error"


class PermissionDeniedError(DomainError):
    status_code = 403
    code = "permission_error"


class NotFoundError(DomainError):
    status_code = 404
    code = "not_found_error"


class ConflictError(DomainError):
    status_code = 409
    code = "conflict_error"


class PreconditionFailedError(ConflictError):
    """A stale `version`, `content_sha256` or a `not_exists` precondition that did not hold."""

    code = "memory_precondition_failed"


class EdgeConflictError(ConflictError):
    code = "memory_edge_conflict"


class PayloadTooLargeError(DomainError):
    status_code = 413
    code = "invalid_request_error"


class QuotaExceededError(DomainError):
    status_code = 429
    code = "quota_exceeded_error"


class RateLimitError(DomainError):
    status_code = 429
    code = "rate_limit_error"


class ServiceUnavailableError(DomainError):
    """A transient failure (database connection lost, broker down): safe to retry."""

    status_code = 503
    code = "overloaded_error"
