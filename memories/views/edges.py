"""Spec 003's memory edges over REST (`/v1/memory_edges...`)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_view
from rest_framework import status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

import memories.selectors.edges as selectors
import memories.services.edges as services
from memories.models import MemoryEdge
from memories.serializers.items import (
    MemoryEdgeCreateInputSerializer,
    MemoryEdgeOutputSerializer,
    MemoryEdgeUpdateInputSerializer,
)
from memories.views.item_schema import EDGE_SCHEMA
from memories.views.items import paginate, validated
from memory_project.api import request_workspace


@extend_schema_view(**EDGE_SCHEMA)
class MemoryEdgeViewSet(viewsets.GenericViewSet):
    lookup_url_kwarg = "edge_id"
    # For schema generation only; every read goes through the selectors.
    queryset = MemoryEdge.objects.none()

    def list(self, request: Request) -> Response:
        queryset = selectors.memory_edge_list(workspace=request_workspace(request), filters=request.query_params)
        return Response(paginate(queryset, request.query_params, MemoryEdgeOutputSerializer))

    def create(self, request: Request) -> Response:
        data = validated(MemoryEdgeCreateInputSerializer, request)
        edge = services.memory_edge_create(workspace=request_workspace(request), **data)
        return Response({"data": MemoryEdgeOutputSerializer(edge).data}, status=status.HTTP_201_CREATED)

    def retrieve(self, request: Request, edge_id: str) -> Response:
        edge = selectors.memory_edge_get(workspace=request_workspace(request), edge_id=edge_id)
        return Response({"data": MemoryEdgeOutputSerializer(edge).data})

    def partial_update(self, request: Request, edge_id: str) -> Response:
        data = validated(MemoryEdgeUpdateInputSerializer, request)
        edge = services.memory_edge_update(workspace=request_workspace(request), edge_id=edge_id, **data)
        return Response({"data": MemoryEdgeOutputSerializer(edge).data})

    def destroy(self, request: Request, edge_id: str) -> Response:
        services.memory_edge_delete(workspace=request_workspace(request), edge_id=edge_id)
        return Response({"data": {"id": edge_id, "deleted": True}})
