"""Reads of one memory item's version history (spec 003 dialect). The history
outlives the item: it answers for deleted memories until their versions are
redacted or purged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import QuerySet

from memories.filters import MemoryVersionFilterSet, check_known_params
from memories.models import MemoryVersion
from memories.selectors.items import filterset_errors
from memory_project.errors import NotFoundError


def memory_item_version_list(
    *, workspace, memory_id: str, filters: Mapping[str, Any] | None = None
) -> QuerySet[MemoryVersion]:
    """Newest first. NotFoundError when the workspace has no version of that
    memory at all (never existed, another workspace's, or purged)."""
    base = MemoryVersion.objects.filter(workspace=workspace, memory_id=memory_id)
    if not base.exists():
        raise NotFoundError(f"No memory '{memory_id}'.")
    check_known_params(filters or {}, MemoryVersionFilterSet)
    filterset = MemoryVersionFilterSet(data=filters or {}, queryset=base)
    if not filterset.is_valid():
        raise filterset_errors(filterset)
    return filterset.qs.order_by("-version", "-created_at", "-id")


def memory_item_version_get(*, workspace, memory_id: str, version_id: str) -> MemoryVersion:
    version = MemoryVersion.objects.filter(workspace=workspace, memory_id=memory_id, pk=version_id).first()
    if version is None:
        raise NotFoundError(f"No version '{version_id}' of memory '{memory_id}'.")
    return version
