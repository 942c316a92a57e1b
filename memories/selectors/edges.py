"""Reads of memory edges, scoped to one workspace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import QuerySet

from memories.filters import MemoryEdgeFilterSet, check_known_params
from memories.models import MemoryEdge
from memories.selectors.items import filterset_errors
from memory_project.errors import NotFoundError


def memory_edge_list(*, workspace, filters: Mapping[str, Any] | None = None) -> QuerySet[MemoryEdge]:
    check_known_params(filters or {}, MemoryEdgeFilterSet)
    filterset = MemoryEdgeFilterSet(data=filters or {}, queryset=MemoryEdge.objects.filter(workspace=workspace))
    if not filterset.is_valid():
        raise filterset_errors(filterset)
    return filterset.qs


def memory_edge_get(*, workspace, edge_id: str) -> MemoryEdge:
    edge = MemoryEdge.objects.filter(workspace=workspace, pk=edge_id).first()
    if edge is None:
        raise NotFoundError(f"No memory edge '{edge_id}'.")
    return edge
