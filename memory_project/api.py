"""The API's error contract: every error, domain or framework, renders as
`{"type": "error", "error": {"type": ..., "message": ...}}`.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response

from accounts.actors import Actor
from memory_project.errors import DomainError

logger = logging.getLogger(__name__)


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"type": code, "message": message}
    error.update(extra)
    return {"type": "error", "error": error}


def _flatten_detail(detail: Any, prefix: str = "") -> list[str]:
    """DRF validation details as `field: message` lines, nested fields dotted
    and list items indexed (`messages[5].role`), as the services name them."""
    if isinstance(detail, dict):
        lines: list[str] = []
        for key, value in detail.items():
            # A list's errors come keyed by the items' index (DRF's ListField and list serializers).
            if isinstance(key, int):
                name = f"{prefix}[{key}]"
            elif prefix:
                name = f"{prefix}.{key}"
            else:
                name = str(key)
            if key == "non_field_errors":
                name = prefix
            lines.extend(_flatten_detail(value, name))
        return lines
    if isinstance(detail, list):
        lines = []
        for index, value in enumerate(detail):
            if isinstance(value, (dict, list)):
                lines.extend(_flatten_detail(value, f"{prefix}[{index}]"))
            else:
                lines.extend(_flatten_detail(value, prefix))
        return lines
    text = str(detail)
    return [f"{prefix}: {text}" if prefix else text]


_DRF_CODES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    406: "invalid_request_error",
    409: "conflict_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        body = error_body(exc.code, exc.message, **({"details": exc.details} if exc.details else {}))
        return Response(body, status=exc.status_code, headers=exc.headers or None)

    if isinstance(exc, Http404):
        return Response(error_body("not_found_error", "Not found."), status=404)
    if isinstance(exc, PermissionDenied):
        return Response(error_body("permission_error", "You do not have permission to do this."), status=403)
    if isinstance(exc, RequestDataTooBig):
        return Response(error_body("invalid_request_error", "Request body is too large."), status=413)

    if isinstance(exc, drf_exceptions.APIException):
        status = exc.status_code
        headers: dict[str, str] = {}
        if isinstance(exc, drf_exceptions.Throttled) and exc.wait is not None:
            headers["Retry-After"] = str(int(exc.wait) + 1)
        if isinstance(exc, (drf_exceptions.NotAuthenticated, drf_exceptions.AuthenticationFailed)):
            status = 401
            headers["WWW-Authenticate"] = 'Bearer realm="api"'
        if isinstance(exc, drf_exceptions.ValidationError):
            message = "; ".join(_flatten_detail(exc.detail)) or "Invalid request."
        else:
            message = "; ".join(_flatten_detail(exc.detail)) if exc.detail else str(exc)
        code = _DRF_CODES.get(status, "api_error")
        return Response(error_body(code, message), status=status, headers=headers or None)

    if isinstance(exc, (OperationalError, InterfaceError)):
        # A dropped connection or a lock timeout: nothing was committed (services
        # own their transactions), so the client may retry.
        logger.warning("database unavailable during request: %s", exc.__class__.__name__)
        return Response(
            error_body("overloaded_error", "The database is temporarily unavailable; retry the request."),
            status=503,
            headers={"Retry-After": "1"},
        )
    if isinstance(exc, DatabaseError):
        return None
    return None


def request_workspace(request):
    """The workspace of the authenticated API key (views run after `HasWorkspaceKey`)."""
    return request.auth.workspace


def request_actor(request, *, session_id: str | None = None):
    """The actor to record for a write made through this request."""

    return Actor.for_api_key(request.auth.pk, session_id=session_id)
