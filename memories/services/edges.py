"""Writes of memory edges. Both ends must be items of the caller's workspace;
(from, to, relation) is unique, enforced by the database constraint so that two
concurrent creates cannot both succeed."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from memories.models import MemoryEdge, MemoryItem, Relation
from memory_project.errors import EdgeConflictError, NotFoundError, ValidationError


def _clean_relation(relation: Any) -> str:
    if relation not in Relation.values:
        raise ValidationError(f"relation: must be one of {', '.join(Relation.values)}.")
    return relation


def _conflict(from_id: str, to_id: str, relation: str) -> EdgeConflictError:
    return EdgeConflictError(f"An edge '{relation}' from '{from_id}' to '{to_id}' already exists.")


def lock_memory_edge(*, workspace, edge_id: str) -> MemoryEdge:
    """The workspace's edge, locked, or NotFoundError. Call inside `transaction.atomic()`."""
    edge = MemoryEdge.objects.select_for_update().filter(workspace=workspace, pk=edge_id).first()
    if edge is None:
        raise NotFoundError(f"No memory edge '{edge_id}'.")
    return edge


def memory_edge_create(*, workspace, from_id: str, to_id: str, relation: str) -> MemoryEdge:
    """Raises ValidationError (bad relation, self-loop), NotFoundError (an end is
    not an item of this workspace), EdgeConflictError (duplicate)."""
    relation = _clean_relation(relation)
    if not isinstance(from_id, str) or not isinstance(to_id, str):
        raise ValidationError("from_id and to_id: must be memory ids.")
    if from_id == to_id:
        raise ValidationError("to_id: an edge must join two different memories.")
    with transaction.atomic():
        ends = set(MemoryItem.objects.filter(workspace=workspace, pk__in=[from_id, to_id]).values_list("pk", flat=True))
        for name, memory_id in (("from_id", from_id), ("to_id", to_id)):
            if memory_id not in ends:
                raise NotFoundError(f"{name}: no memory '{memory_id}'.")
        edge = MemoryEdge(workspace=workspace, from_item_id=from_id, to_item_id=to_id, relation=relation)
        try:
            with transaction.atomic():
                edge.save(force_insert=True)
        except IntegrityError:
            raise _conflict(from_id, to_id, relation)
    return edge


def memory_edge_update(*, workspace, edge_id: str, relation: str) -> MemoryEdge:
    """Change the relation (the only mutable field). A change onto an existing
    (from, to, relation) is an EdgeConflictError."""
    relation = _clean_relation(relation)
    with transaction.atomic():
        edge = lock_memory_edge(workspace=workspace, edge_id=edge_id)
        ends = MemoryItem.objects.filter(workspace=workspace, pk__in=[edge.from_item_id, edge.to_item_id]).count()
        if ends != 2:
            raise NotFoundError(f"No memory edge '{edge_id}'.")
        if edge.relation == relation:
            return edge
        edge.relation = relation
        try:
            with transaction.atomic():
                edge.save(update_fields=["relation"])
        except IntegrityError:
            raise _conflict(edge.from_item_id, edge.to_item_id, relation)
    return edge


def memory_edge_delete(*, workspace, edge_id: str) -> str:
    with transaction.atomic():
        edge = lock_memory_edge(workspace=workspace, edge_id=edge_id)
        edge.delete()
    return edge_id
