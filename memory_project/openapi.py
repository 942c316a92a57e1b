"""The error contract in the OpenAPI schema.

Every operation can answer with the error shape of `memory_project.api`
(bad input, a missing or revoked key, a read-only key, another workspace's
id, a precondition, a body too large, a rate limit, a lost database). Views
document their success responses; this hook adds the errors once, for all of
them, so the published schema matches what clients actually receive.
"""

from __future__ import annotations

from typing import Any

from rest_framework.metadata import BaseMetadata

ERROR_COMPONENT = "ErrorResponse"

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type", "error"],
    "properties": {
        "type": {"type": "string", "enum": ["error"]},
        "error": {
            "type": "object",
            "required": ["type", "message"],
            "properties": {
                "type": {"type": "string"},
                "message": {"type": "string"},
                "details": {"type": "object", "additionalProperties": True},
            },
            "additionalProperties": True,
        },
    },
}

_RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait before retrying."}}

ERROR_RESPONSES: dict[str, tuple[str, dict[str, Any]]] = {
    "400": ("Invalid request: malformed JSON, wrong types, unknown or out-of-range values.", {}),
    "401": ("Missing, malformed or revoked API key.", {}),
    "403": ("The key may not do this (e.g. a read-only key on a write).", {}),
    "404": ("No such object in the key's workspace.", {}),
    "405": ("Method not allowed on this route.", {}),
    "409": ("Conflict: a stale `version` / `content_sha256`, a duplicate, or an illegal transition.", {}),
    "413": ("The request body is too large.", {}),
    "414": ("The request line (path and query) is too long; send long values in a body.", {}),
    "415": ("The body is not `application/json`.", {}),
    "429": ("Rate limit or quota exceeded.", _RETRY_AFTER),
    "503": ("The database is temporarily unavailable; retry.", _RETRY_AFTER),
}


def add_error_responses(result: dict[str, Any], generator, request, public) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: document the error shape on every
    operation (without replacing an error response a view documents itself)."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components.setdefault(ERROR_COMPONENT, ERROR_SCHEMA)
    ref = {"$ref": f"#/components/schemas/{ERROR_COMPONENT}"}
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            if method not in {"get", "post", "put", "patch", "delete"} or not isinstance(operation, dict):
                continue
            responses = operation.setdefault("responses", {})
            for status, (description, headers) in ERROR_RESPONSES.items():
                if status in responses:
                    continue
                response: dict[str, Any] = {"description": description, "content": {"application/json": {"schema": ref}}}
                if headers:
                    response["headers"] = headers
                responses[status] = response
    return result


class ApiMetadata(BaseMetadata):
    """`OPTIONS` on any route: what it accepts and returns, nothing more.

    DRF's default metadata introspects a serializer from `get_serializer()`,
    which views with per-action input/output serializers do not provide (an
    assertion, hence a 500). Field-level detail lives in `/v1/schema/`.
    """

    def determine_metadata(self, request, view) -> dict[str, Any]:
        return {
            "name": view.get_view_name(),
            "description": view.get_view_description(),
            "allowed_methods": sorted(m.upper() for m in view.allowed_methods if m.upper() != "OPTIONS"),
            "renders": [renderer.media_type for renderer in view.renderer_classes],
            "parses": [parser.media_type for parser in view.parser_classes],
            "schema": "/v1/schema/",
        }
