"""OpenAPI descriptions of the memory-store routes (drf-spectacular), kept apart
from the views so they stay thin. Operation ids follow the SDK's method names."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import serializers

from memories.serializers.stores import (
    MemoryOutputSerializer,
    MemoryPutInputSerializer,
    MemoryStoreCreateInputSerializer,
    MemoryStoreOutputSerializer,
    MemoryStoreUpdateInputSerializer,
    MemoryUpdateInputSerializer,
    MemoryVersionOutputSerializer,
    MemoryWriteInputSerializer,
)

Q = OpenApiParameter.QUERY


def schema_for_generic_methods(schema: dict, *decorated: str) -> dict:
    """The entries `@extend_schema_view` applies: the extra methods routed by
    name (archive, execute...) carry their `extend_schema` directly, since
    `extend_schema_view` only finds list/create/... and `@action`s."""
    return {name: entry for name, entry in schema.items() if name not in decorated}


def _param(name: str, kind=OpenApiTypes.STR, description: str = "", enum=None) -> OpenApiParameter:
    return OpenApiParameter(name, kind, Q, required=False, description=description, enum=enum)


VIEW = _param("view", description="basic (content null) or full", enum=["basic", "full"])
LIMIT = _param("limit", OpenApiTypes.INT, "1-100, default 20; at most 20 with view=full")
PAGE = _param("page", description="next_page of the previous response")
CREATED_RANGE = [
    _param("created_at[gte]", OpenApiTypes.DATETIME, "inclusive lower bound"),
    _param("created_at[lte]", OpenApiTypes.DATETIME, "inclusive upper bound"),
]


def _page(name: str, item) -> type[serializers.Serializer]:
    """`{"data": [...], "next_page": ...}`; `many=False` stops the generator
    from documenting a list action's answer as a bare array."""
    fields = {"data": item(many=True), "next_page": serializers.CharField(allow_null=True)}
    return extend_schema_serializer(many=False)(type(name, (serializers.Serializer,), fields))


def _deleted(name: str) -> serializers.Serializer:
    return inline_serializer(name, {"id": serializers.CharField(), "type": serializers.CharField()})


ERRORS = {
    400: OpenApiResponse(description="invalid_request_error (also: the store is archived)"),
    404: OpenApiResponse(description="not_found_error (also another workspace's ids)"),
    409: OpenApiResponse(description="memory_precondition_failed / conflict_error"),
}

store_schema = {
    "list": extend_schema(
        operation_id="memory_stores_list",
        parameters=[_param("include_archived", OpenApiTypes.BOOL), *CREATED_RANGE, LIMIT, PAGE],
        responses=_page("MemoryStorePage", MemoryStoreOutputSerializer),
    ),
    "create": extend_schema(
        operation_id="memory_stores_create",
        request=MemoryStoreCreateInputSerializer,
        responses={201: MemoryStoreOutputSerializer, 400: ERRORS[400]},
    ),
    "retrieve": extend_schema(operation_id="memory_stores_retrieve", responses=MemoryStoreOutputSerializer),
    "update": extend_schema(
        operation_id="memory_stores_update",
        request=MemoryStoreUpdateInputSerializer,
        responses={200: MemoryStoreOutputSerializer, 400: ERRORS[400]},
    ),
    "archive": extend_schema(operation_id="memory_stores_archive", request=None, responses=MemoryStoreOutputSerializer),
    "destroy": extend_schema(operation_id="memory_stores_delete", responses={200: _deleted("MemoryStoreDeleted")}),
}

memory_schema = {
    "list": extend_schema(
        operation_id="memory_stores_memories_list",
        parameters=[
            _param("path_prefix", description="ends with '/', matches whole segments"),
            _param("depth", OpenApiTypes.INT, "0 = all descendants; n rolls deeper paths into memory_prefix"),
            VIEW,
            LIMIT,
            PAGE,
        ],
        responses=_page("MemoryPage", MemoryOutputSerializer),
    ),
    "create": extend_schema(
        operation_id="memory_stores_memories_write",
        description="Upsert by path; precondition {type: not_exists} makes it create-only.",
        parameters=[VIEW],
        request=MemoryWriteInputSerializer,
        responses={201: MemoryOutputSerializer, 200: MemoryOutputSerializer, **ERRORS},
    ),
    "retrieve": extend_schema(
        operation_id="memory_stores_memories_retrieve", parameters=[VIEW], responses=MemoryOutputSerializer
    ),
    "update": extend_schema(
        operation_id="memory_stores_memories_update",
        parameters=[VIEW],
        request=MemoryUpdateInputSerializer,
        responses={200: MemoryOutputSerializer, **ERRORS},
    ),
    "put_versioned": extend_schema(
        operation_id="memory_stores_memories_put",
        description="Spec 001: replace the content when `version` is current; a stale version is 409.",
        parameters=[VIEW],
        request=MemoryPutInputSerializer,
        responses={200: MemoryOutputSerializer, **ERRORS},
    ),
    "destroy": extend_schema(
        operation_id="memory_stores_memories_delete",
        parameters=[_param("expected_content_sha256")],
        responses={200: _deleted("MemoryDeleted"), 409: ERRORS[409]},
    ),
}

version_schema = {
    "list": extend_schema(
        operation_id="memory_stores_memory_versions_list",
        parameters=[
            _param("memory_id"),
            _param("operation", enum=["created", "modified", "deleted"]),
            _param("session_id"),
            _param("api_key_id"),
            _param("service_account_id"),
            *CREATED_RANGE,
            VIEW,
            LIMIT,
            PAGE,
        ],
        responses=_page("MemoryVersionPage", MemoryVersionOutputSerializer),
    ),
    "retrieve": extend_schema(
        operation_id="memory_stores_memory_versions_retrieve", parameters=[VIEW], responses=MemoryVersionOutputSerializer
    ),
    "redact": extend_schema(
        operation_id="memory_stores_memory_versions_redact", request=None, responses=MemoryVersionOutputSerializer
    ),
}

tool_schema = {
    "list": extend_schema(
        operation_id="memory_stores_tools_list",
        parameters=[
            _param("format", enum=["anthropic", "openai", "openai_responses"]),
            _param("conversation_id", description="only the read tools when attached read_only"),
        ],
        responses=OpenApiTypes.OBJECT,
    ),
    "execute": extend_schema(
        operation_id="memory_stores_tools_execute",
        request=inline_serializer(
            "MemoryToolCall", {"input": serializers.JSONField(), "conversation_id": serializers.CharField(required=False)}
        ),
        responses=OpenApiTypes.OBJECT,
    ),
}
