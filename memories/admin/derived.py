"""Which memories came from which floors: the reads behind the conversation
page, where each floor is shown with the memories derived from it."""

from __future__ import annotations

import json
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence

from django.db.models import Q

from memories.models import LifecycleStatus, MemoryItem

# Memories shown beside one page of floors; a page of 100 floors rarely yields
# more than a few dozen.
MAX_DERIVED = 500


def branch_scope_ids(external_id: str, branch_names: Sequence[str]) -> list[str]:
    """Branch scope ids in both spellings the pipeline and clients produce."""
    ids = []
    for name in branch_names:
        ids.append(json.dumps([external_id, name], ensure_ascii=False, separators=(",", ":")))
        ids.append(json.dumps([external_id, name], ensure_ascii=False))
    return ids


def memories_for_floors(
    *, workspace_id: str, conversation, messages: Sequence, branch_names: Sequence[str], approved_only: bool = False
) -> tuple[dict[str, list[MemoryItem]], list[MemoryItem]]:
    """(memories by message id, memories of the conversation not tied to a
    shown floor). A memory belongs to a floor when it names the floor's message
    as its source (or is a floor-scope memory of it), or when it is a summary of
    the conversation whose coverage ends at that floor. `approved_only`: only
    memories in force after approval (active or compacted), none pending or
    rejected from review."""
    if not messages:
        return {}, []
    ids = [m.pk for m in messages]
    low, high = min(m.floor_no for m in messages), max(m.floor_no for m in messages)
    conversation_scopes = Q(scope="chat", scope_id__in=[conversation.external_id, str(conversation.pk)]) | Q(
        scope="branch", scope_id__in=branch_scope_ids(conversation.external_id, branch_names)
    )
    query = (
        Q(source_message_id__in=ids)
        | Q(source_floor_id__in=ids)
        | Q(scope="floor", scope_id__in=ids)
        | (conversation_scopes & Q(coverage_end_floor_no__gte=low, coverage_start_floor_no__lte=high))
    )
    found = MemoryItem.objects.filter(query, workspace_id=workspace_id)
    if approved_only:
        found = found.filter(lifecycle_status__in=[LifecycleStatus.ACTIVE, LifecycleStatus.COMPACTED])
    items = list(
        found
        .order_by("created_at", "id")[:MAX_DERIVED]
    )
    floors = sorted((m.floor_no, m.pk) for m in messages)
    floor_numbers = [floor_no for floor_no, _pk in floors]
    by_message: dict[str, list[MemoryItem]] = defaultdict(list)
    unplaced: list[MemoryItem] = []
    id_set = set(ids)
    for item in items:
        target = next(
            (ref for ref in (item.source_message_id, item.source_floor_id) if ref in id_set),
            None,
        )
        if target is None and item.scope == "floor":
            target = item.scope_id if item.scope_id in id_set else None
        if target is None and item.coverage_end_floor_no is not None:
            # Beside the last shown floor the summary covers.
            index = bisect_right(floor_numbers, min(item.coverage_end_floor_no, high)) - 1
            if index >= 0:
                target = floors[index][1]
        if target is None:
            unplaced.append(item)
        else:
            by_message[target].append(item)
    return dict(by_message), unplaced
