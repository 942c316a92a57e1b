"""Spec 003's memory items over REST (`/v1/memories...`): CRUD, stats, batch
actions, and the item's version history (list, get, redact, restore). Views
parse, call one service or selector, and serialize."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema_view
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

import memories.selectors.item_versions as version_selectors
import memories.selectors.items as selectors
import memories.services.items as services
import memories.services.items_batch as batch_services
from memories.models import MemoryItem
from memories.serializers.items import (
    MemoryBatchDeleteInputSerializer,
    MemoryBatchStatusInputSerializer,
    MemoryItemCreateInputSerializer,
    MemoryItemOutputSerializer,
    MemoryItemUpdateInputSerializer,
    MemoryItemVersionOutputSerializer,
    MemoryRestoreInputSerializer,
)
from memories.services.lineage.erase import (
    memories_delete_following_lineage,
    memory_delete_following_lineage,
    memory_version_redact_following_lineage,
)
from memories.services.user_memories import user_memories_delete
from memories.views.item_schema import DESTROY_ALL_SCHEMA, ITEM_SCHEMA
from memory_project.api import request_actor, request_workspace
from memory_project.errors import ValidationError

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_OFFSET = 1_000_000


def _int_param(params: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ValidationError(f"{name}: must be an integer.")
    if not low <= value <= high:
        raise ValidationError(f"{name}: must be between {low} and {high}.")
    return value


# How far past the page an exact `meta.total` is counted (see `paginate`).
TOTAL_COUNT_AHEAD = 1000


def paginate(
    queryset: QuerySet, params: Mapping[str, Any], serializer_class, *, count_total: bool = True
) -> dict[str, Any]:
    """Spec 003's offset page: `{"data": [...], "meta": {"total", "limit", "offset", "has_more", "total_exact"}}`.

    The cost stays bounded by the page, never by the table: `total` is
    counted up to `TOTAL_COUNT_AHEAD` rows past the page (exact below that,
    `total_exact: false` and that bound above it). Without `count_total` (a
    list filtered by `q`, where counting means evaluating the search on every
    match) it is the lower bound the page proves: `offset + rows + 1` when
    more follow; past the last row, the rows before it, counted. Either way
    a client that pages while `offset + limit < total`, or while `has_more`,
    sees every row.
    """
    limit = _int_param(params, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    offset = _int_param(params, "offset", 0, 0, MAX_OFFSET)
    rows = list(queryset[offset : offset + limit + 1])
    has_more = len(rows) > limit
    rows = rows[:limit]
    if count_total:
        cap = offset + limit + TOTAL_COUNT_AHEAD
        counted = queryset.order_by()[: cap + 1].count()
        total, exact = (counted, True) if counted <= cap else (cap, False)
    elif rows or not offset:
        total, exact = offset + len(rows) + (1 if has_more else 0), not has_more
    else:
        # Past the last row the page proves no rows: those before it are
        # counted (no more than the page's own OFFSET read), so `total` never
        # claims rows that do not exist.
        total, exact = queryset.order_by()[:offset].count(), True
    return {
        "data": serializer_class(rows, many=True).data,
        "meta": {"total": total, "limit": limit, "offset": offset, "has_more": has_more, "total_exact": exact},
    }


def validated(serializer_class, request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


@extend_schema_view(**ITEM_SCHEMA)
class MemoryItemViewSet(viewsets.GenericViewSet):
    lookup_url_kwarg = "memory_id"
    # For schema generation only; every read goes through the selectors.
    queryset = MemoryItem.objects.none()

    def list(self, request: Request) -> Response:
        if "query" in request.query_params:
            return Response(self._search(request))
        queryset = selectors.memory_item_list(workspace=request_workspace(request), filters=request.query_params)
        # With `q` a count would run the search on every match: the page's own
        # lower bound is reported instead (see `paginate`).
        count_total = not request.query_params.get("q")
        return Response(paginate(queryset, request.query_params, MemoryItemOutputSerializer, count_total=count_total))

    def _search(self, request: Request) -> dict[str, Any]:
        params = request.query_params
        found = selectors.memory_item_search(workspace=request_workspace(request), filters=params)
        limit = _int_param(params, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        offset = _int_param(params, "offset", 0, 0, MAX_OFFSET)
        page = found[offset:offset + limit]
        rows = MemoryItemOutputSerializer([item for item, _score in page], many=True).data
        for row, (_item, score) in zip(rows, page, strict=True):
            row["score"] = round(score, 4)
        return {"data": rows, "meta": {"total": len(found), "limit": limit, "offset": offset,
                                       "has_more": offset + limit < len(found), "total_exact": True}}

    @DESTROY_ALL_SCHEMA
    def destroy_all(self, request: Request) -> Response:
        params = request.query_params
        unknown = sorted(set(params) - {"user_id", "include_conversations"})
        if unknown:
            raise ValidationError(f"{unknown[0]}: deleting memories takes user_id and include_conversations only.")
        include = params.get("include_conversations", "false")
        if include not in ("true", "false"):
            raise ValidationError("include_conversations: true or false.")
        deleted, report = user_memories_delete(
            workspace=request_workspace(request), actor=request_actor(request), user_id=params.get("user_id"),
            include_conversations=include == "true",
        )
        return Response({"data": {"user_id": params.get("user_id"), "deleted": len(deleted), "ids": deleted},
                         "lineage": report.as_dict()})

    def create(self, request: Request) -> Response:
        data = validated(MemoryItemCreateInputSerializer, request)
        item = services.memory_item_create(workspace=request_workspace(request), actor=request_actor(request), **data)
        return Response({"data": MemoryItemOutputSerializer(item).data}, status=status.HTTP_201_CREATED)

    def retrieve(self, request: Request, memory_id: str) -> Response:
        item = selectors.memory_item_get(workspace=request_workspace(request), memory_id=memory_id)
        return Response({"data": MemoryItemOutputSerializer(item).data})

    def partial_update(self, request: Request, memory_id: str) -> Response:
        data = validated(MemoryItemUpdateInputSerializer, request)
        expected_version = data.pop("expected_version", None)
        expected_sha = data.pop("expected_content_sha256", None)
        item = services.memory_item_update(
            workspace=request_workspace(request),
            actor=request_actor(request),
            memory_id=memory_id,
            changes=data,
            expected_version=expected_version,
            expected_content_sha256=expected_sha,
        )
        return Response({"data": MemoryItemOutputSerializer(item).data})

    def destroy(self, request: Request, memory_id: str) -> Response:
        report = memory_delete_following_lineage(
            workspace=request_workspace(request), actor=request_actor(request), memory_id=memory_id
        )
        return Response({"data": {"id": memory_id, "deleted": True}, "lineage": report.as_dict()})

    @action(detail=False, methods=["get"])
    def stats(self, request: Request) -> Response:
        data = selectors.memory_item_stats(workspace=request_workspace(request), filters=request.query_params)
        return Response({"data": data})

    @action(detail=False, methods=["patch"], url_path="batch/status")
    def batch_status(self, request: Request) -> Response:
        data = validated(MemoryBatchStatusInputSerializer, request)
        result = batch_services.memory_items_set_status(
            workspace=request_workspace(request), actor=request_actor(request), **data
        )
        return Response({"data": {"results": result.results, "meta": result.counts}})

    @action(detail=False, methods=["post"], url_path="batch/delete")
    def batch_delete(self, request: Request) -> Response:
        data = validated(MemoryBatchDeleteInputSerializer, request)
        result, report = memories_delete_following_lineage(
            workspace=request_workspace(request), actor=request_actor(request), **data
        )
        return Response({"data": {"results": result.results, "meta": result.counts}, "lineage": report.as_dict()})

    @action(detail=True, methods=["get"])
    def versions(self, request: Request, memory_id: str) -> Response:
        queryset = version_selectors.memory_item_version_list(
            workspace=request_workspace(request), memory_id=memory_id, filters=request.query_params
        )
        return Response(paginate(queryset, request.query_params, MemoryItemVersionOutputSerializer))

    @action(detail=True, methods=["get"], url_path=r"versions/(?P<version_id>[^/.]+)")
    def version(self, request: Request, memory_id: str, version_id: str) -> Response:
        version = version_selectors.memory_item_version_get(
            workspace=request_workspace(request), memory_id=memory_id, version_id=version_id
        )
        return Response({"data": MemoryItemVersionOutputSerializer(version).data})

    @action(detail=True, methods=["post"], url_path=r"versions/(?P<version_id>[^/.]+)/redact")
    def redact(self, request: Request, memory_id: str, version_id: str) -> Response:
        workspace = request_workspace(request)
        version_selectors.memory_item_version_get(workspace=workspace, memory_id=memory_id, version_id=version_id)
        version, report = memory_version_redact_following_lineage(
            workspace=workspace, version_id=version_id, actor=request_actor(request)
        )
        return Response({"data": MemoryItemVersionOutputSerializer(version).data, "lineage": report.as_dict()})

    @action(detail=True, methods=["post"])
    def restore(self, request: Request, memory_id: str) -> Response:
        data = validated(MemoryRestoreInputSerializer, request)
        item = services.memory_item_restore(
            workspace=request_workspace(request),
            actor=request_actor(request),
            memory_id=memory_id,
            version_id=data["version_id"],
        )
        return Response({"data": MemoryItemOutputSerializer(item).data})
