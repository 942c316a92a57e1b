"""The memory-store API (`/v1/memory_stores/...`), wire-compatible with the
`anthropic` SDK's `client.beta.memory_stores`. Views parse, call one service or
selector, and serialize."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_view
from rest_framework import status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

import memories.pagination as pg
import memories.selectors.stores as selectors
import memories.services.store_memories as memory_services
import memories.services.stores as store_services
from memories.models import MAX_PATH_SEGMENTS, MemoryItem, MemoryStore, MemoryVersion, VersionOperation
from memories.paths import normalize_prefix
from memories.serializers.stores import (
    MemoryOutputSerializer,
    MemoryPutInputSerializer,
    MemoryStoreCreateInputSerializer,
    MemoryStoreOutputSerializer,
    MemoryStoreUpdateInputSerializer,
    MemoryUpdateInputSerializer,
    MemoryVersionOutputSerializer,
    MemoryWriteInputSerializer,
    memory_deleted_wire,
    memory_store_deleted_wire,
)
from memories.services.lineage.routes import (
    store_memory_delete_following_lineage,
    store_version_redact_following_lineage,
)
from memories.views.store_schema import memory_schema, schema_for_generic_methods, store_schema, version_schema
from memory_project.api import request_actor, request_workspace
from memory_project.errors import ValidationError


class MemoryStoreDialectMixin:
    """Checks the optional `anthropic-workspace-id` header the SDK can send: a
    key belongs to one workspace, so the header may only name that one."""

    def initial(self, request: Request, *args, **kwargs) -> None:
        super().initial(request, *args, **kwargs)
        requested = request.headers.get("anthropic-workspace-id")
        if requested and requested != request_workspace(request).pk:
            raise ValidationError("anthropic-workspace-id does not match the API key's workspace.")

    def _input(self, serializer_class, request: Request) -> dict:
        serializer = serializer_class(data=request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data


@extend_schema_view(**schema_for_generic_methods(store_schema, "archive"))
class MemoryStoreViewSet(MemoryStoreDialectMixin, viewsets.GenericViewSet):
    """Memory stores: named containers of path-addressed memories (`memory_store`)."""

    # For the schema generator only: every action picks its own serializers.
    queryset = MemoryStore.objects.none()
    serializer_class = MemoryStoreOutputSerializer

    def list(self, request: Request) -> Response:
        gte, lte = pg.parse_created_range(request.query_params)
        page = selectors.memory_store_list(
            workspace=request_workspace(request),
            include_archived=pg.parse_bool(request.query_params, "include_archived"),
            created_gte=gte,
            created_lte=lte,
            limit=pg.parse_limit(request.query_params),
            page=request.query_params.get("page"),
        )
        data = MemoryStoreOutputSerializer(page.items, many=True).data
        return Response(pg.page_response(data, page.next_page))

    def create(self, request: Request) -> Response:
        data = self._input(MemoryStoreCreateInputSerializer, request)
        workspace = request_workspace(request)
        store = store_services.memory_store_create(workspace=workspace, **data)
        store = selectors.memory_store_get(workspace=workspace, store_id=store.pk)
        return Response(MemoryStoreOutputSerializer(store).data, status=status.HTTP_201_CREATED)

    def retrieve(self, request: Request, store_id: str) -> Response:
        store = selectors.memory_store_get(workspace=request_workspace(request), store_id=store_id)
        return Response(MemoryStoreOutputSerializer(store).data)

    def update(self, request: Request, store_id: str) -> Response:
        data = self._input(MemoryStoreUpdateInputSerializer, request)
        workspace = request_workspace(request)
        store_services.memory_store_update(workspace=workspace, store_id=store_id, **data)
        store = selectors.memory_store_get(workspace=workspace, store_id=store_id)
        return Response(MemoryStoreOutputSerializer(store).data)

    @store_schema["archive"]
    def archive(self, request: Request, store_id: str) -> Response:
        workspace = request_workspace(request)
        store_services.memory_store_archive(workspace=workspace, store_id=store_id)
        store = selectors.memory_store_get(workspace=workspace, store_id=store_id)
        return Response(MemoryStoreOutputSerializer(store).data)

    def destroy(self, request: Request, store_id: str) -> Response:
        deleted = store_services.memory_store_delete(workspace=request_workspace(request), store_id=store_id)
        return Response(memory_store_deleted_wire(deleted))


@extend_schema_view(**schema_for_generic_methods(memory_schema, "put_versioned"))
class MemoryViewSet(MemoryStoreDialectMixin, viewsets.GenericViewSet):
    """A store's memories (`memory`, and `memory_prefix` roll-ups in lists)."""

    queryset = MemoryItem.objects.none()
    serializer_class = MemoryOutputSerializer

    def list(self, request: Request, store_id: str) -> Response:
        params = request.query_params
        view = pg.parse_view(params, default="basic")
        store = selectors.memory_store_exists(workspace=request_workspace(request), store_id=store_id)
        prefix = normalize_prefix(params["path_prefix"]) if "path_prefix" in params else "/"
        page = selectors.memory_list(
            store=store,
            prefix=prefix,
            depth=pg.parse_int(params, "depth", default=0, maximum=MAX_PATH_SEGMENTS),
            limit=pg.parse_limit(params, view=view),
            page=params.get("page"),
            with_content=view == "full",
        )
        data = MemoryOutputSerializer(page.items, many=True, context={"view": view}).data
        return Response(pg.page_response(data, page.next_page))

    def create(self, request: Request, store_id: str) -> Response:
        """Write: upsert by path (201 when it created the memory)."""
        view = pg.parse_view(request.query_params, default="basic")
        data = self._input(MemoryWriteInputSerializer, request)
        item, operation = memory_services.store_memory_write(
            workspace=request_workspace(request), store_id=store_id, actor=request_actor(request), **data
        )
        code = status.HTTP_201_CREATED if operation == VersionOperation.CREATED else status.HTTP_200_OK
        return Response(MemoryOutputSerializer(item, context={"view": view}).data, status=code)

    def retrieve(self, request: Request, store_id: str, memory_id: str) -> Response:
        view = pg.parse_view(request.query_params, default="full")
        item = selectors.memory_get(workspace=request_workspace(request), store_id=store_id, memory_id=memory_id)
        return Response(MemoryOutputSerializer(item, context={"view": view}).data)

    def update(self, request: Request, store_id: str, memory_id: str) -> Response:
        view = pg.parse_view(request.query_params, default="basic")
        data = self._input(MemoryUpdateInputSerializer, request)
        item = memory_services.store_memory_update(
            workspace=request_workspace(request),
            store_id=store_id,
            memory_id=memory_id,
            actor=request_actor(request),
            **data,
        )
        return Response(MemoryOutputSerializer(item, context={"view": view}).data)

    @memory_schema["put_versioned"]
    def put_versioned(self, request: Request, store_id: str, memory_id: str) -> Response:
        """Spec 001's update with the integer `version`; answers with the content."""
        view = pg.parse_view(request.query_params, default="full")
        data = self._input(MemoryPutInputSerializer, request)
        item = memory_services.store_memory_put(
            workspace=request_workspace(request),
            store_id=store_id,
            memory_id=memory_id,
            actor=request_actor(request),
            **data,
        )
        return Response(MemoryOutputSerializer(item, context={"view": view}).data)

    def destroy(self, request: Request, store_id: str, memory_id: str) -> Response:
        deleted = store_memory_delete_following_lineage(
            workspace=request_workspace(request),
            store_id=store_id,
            memory_id=memory_id,
            actor=request_actor(request),
            expected_content_sha256=request.query_params.get("expected_content_sha256"),
        )
        return Response(memory_deleted_wire(deleted))


@extend_schema_view(**schema_for_generic_methods(version_schema, "redact"))
class MemoryVersionViewSet(MemoryStoreDialectMixin, viewsets.GenericViewSet):
    """A store's immutable memory versions (`memory_version`), newest first."""

    queryset = MemoryVersion.objects.none()
    serializer_class = MemoryVersionOutputSerializer

    def list(self, request: Request, store_id: str) -> Response:
        params = request.query_params
        view = pg.parse_view(params, default="basic")
        store = selectors.memory_store_exists(workspace=request_workspace(request), store_id=store_id)
        gte, lte = pg.parse_created_range(params)
        page = selectors.memory_version_list(
            store=store,
            memory_id=params.get("memory_id"),
            operation=params.get("operation"),
            session_id=params.get("session_id"),
            api_key_id=params.get("api_key_id"),
            service_account_id=params.get("service_account_id"),
            created_gte=gte,
            created_lte=lte,
            limit=pg.parse_limit(params, view=view),
            page=params.get("page"),
            with_content=view == "full",
        )
        data = MemoryVersionOutputSerializer(page.items, many=True, context={"view": view}).data
        return Response(pg.page_response(data, page.next_page))

    def retrieve(self, request: Request, store_id: str, version_id: str) -> Response:
        view = pg.parse_view(request.query_params, default="full")
        version = selectors.memory_version_get(
            workspace=request_workspace(request), store_id=store_id, version_id=version_id
        )
        return Response(MemoryVersionOutputSerializer(version, context={"view": view}).data)

    @version_schema["redact"]
    def redact(self, request: Request, store_id: str, version_id: str) -> Response:
        version = store_version_redact_following_lineage(
            workspace=request_workspace(request), store_id=store_id, version_id=version_id, actor=request_actor(request)
        )
        return Response(MemoryVersionOutputSerializer(version, context={"view": "full"}).data)


class MemoryVersionAliasViewSet(MemoryVersionViewSet):
    """Spec 001's `/versions/...` spelling of the same routes (left out of the schema)."""

    schema = None
