"""Finding what was made from messages or memories, through `sources`,
`source_memory_ids` and `source_job` (a fixpoint: a macro of a macro of a
deleted micro is found too)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q

from conversations.selectors.conversations import conversation_get
from memories.models import MemoryItem, MemoryType, Scope
from memories.services.scopes import branch_scope_id


def derived_ids(rows: Iterable[dict], *, message_ids: set[str], memory_ids: set[str]) -> set[str]:
    """The ids among `rows` (pk, sources, source_memory_ids) made from one of
    the messages or memories, directly or through another derived row."""
    rows = list(rows)
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        gone = memory_ids | found
        for row in rows:
            if row["pk"] in found or row["pk"] in memory_ids:
                continue
            if message_ids.intersection(row["sources"] or ()) or gone.intersection(row["source_memory_ids"] or ()):
                found.add(row["pk"])
                changed = True
    return found


def conversation_items(*, workspace, external_id: str, branch_names: Iterable[str], user_id: str | None):
    """The memories a conversation's messages can have reached: its branch
    scopes, its chat scope, its user's scope and whatever its extractions wrote."""
    scope_ids = [branch_scope_id(external_id, name) for name in branch_names]
    query = Q(scope=Scope.BRANCH, scope_id__in=scope_ids) | Q(scope=Scope.CHAT, scope_id=external_id)
    query |= Q(source_job__scope=Scope.BRANCH, source_job__scope_id__in=scope_ids)
    if user_id:
        query |= Q(scope=Scope.USER, scope_id=user_id)
    return MemoryItem.objects.filter(query, workspace=workspace)


def memory_descendants(*, workspace, memory_ids: Iterable[str]) -> list[str]:
    """The memories compacted, directly or not, from these ones (macro
    summaries of their scopes). For the admin's "also appears in" and for
    erasure after a memory's deletion or redaction."""
    memory_ids = set(memory_ids)
    if not memory_ids:
        return []
    scopes = set(
        MemoryItem.objects.filter(workspace=workspace, pk__in=memory_ids).values_list("scope", "scope_id")
    )
    query = Q()
    for scope, scope_id in scopes:
        query |= Q(scope=scope, scope_id=scope_id)
    candidates = MemoryItem.objects.filter(workspace=workspace, type=MemoryType.SUMMARY).exclude(source_memory_ids=[])
    if scopes:
        candidates = candidates.filter(query)
    rows = candidates.values("pk", "sources", "source_memory_ids")
    return sorted(derived_ids(rows, message_ids=set(), memory_ids=memory_ids))


def message_descendants(*, workspace, external_id: str, message_ids: Iterable[str]) -> list[str]:
    """The memories made from these messages of one conversation (what an edit
    or deletion of them would erase): for the admin's "also appears in"."""

    conversation = conversation_get(workspace=workspace, external_id=external_id)
    if conversation is None:
        return []
    rows = conversation_items(
        workspace=workspace, external_id=external_id, user_id=conversation.user_id,
        branch_names=conversation.branches.values_list("name", flat=True),
    ).values("pk", "sources", "source_memory_ids")
    return sorted(derived_ids(rows, message_ids=set(message_ids), memory_ids=set()))
