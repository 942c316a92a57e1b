"""Reads of spec 003's memory items, always scoped to one workspace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import Avg, Count, Q, QuerySet, Sum

from conversations.selectors.branches import branch_list
from conversations.selectors.conversations import conversation_get
from memories.filters import MemoryItemFilterSet, check_known_params
from memories.models import LifecycleStatus, MemoryItem, MemoryType, Scope, Status
from memories.recall import ranking
from memories.recall.dense import dense_similarities
from memories.recall.index import memory_scope_token
from memories.recall.models import RecallKind
from memories.services.scopes import branch_scope_id
from memory_project.errors import NotFoundError, ValidationError

STATS_TYPES = (MemoryType.FACT, MemoryType.SUMMARY, MemoryType.OPEN_LOOP)
# `query` turns a list into a search ranked by the recall index.
SEARCH_PARAMS = ("query",)
MAX_QUERY_CHARS = 2000


def filterset_errors(filterset) -> ValidationError:
    lines = [f"{name}: {' '.join(str(m) for m in messages)}" for name, messages in filterset.errors.items()]
    return ValidationError("; ".join(lines) or "Invalid query parameters.")


def memory_item_list(*, workspace, filters: Mapping[str, Any] | None = None) -> QuerySet[MemoryItem]:
    """The workspace's items matching spec 003's list filters, sorted (default
    newest first). Store documents only when `scope=store` or `type=document` is
    asked. Raises ValidationError for invalid filter values and for a
    parameter that is no filter of this list."""
    filters = filters or {}
    check_known_params(filters, MemoryItemFilterSet, extra=SEARCH_PARAMS)
    filterset = MemoryItemFilterSet(data=filters, queryset=MemoryItem.objects.filter(workspace=workspace),
                                    workspace_id=workspace.pk)
    if not filterset.is_valid():
        raise filterset_errors(filterset)
    return filterset.qs


def _search_scope_tokens(*, workspace, filters: Mapping[str, Any]) -> list[str]:
    """The recall index's scope tokens a search looks in: a user's scope, a
    conversation's own scopes (chat, its branches, its floors) or one scope."""
    ws = workspace.pk
    if filters.get("user_id"):
        return [memory_scope_token(ws, Scope.USER, filters["user_id"])]
    if filters.get("conversation_id"):
        external_id = filters["conversation_id"]
        conversation = conversation_get(workspace=workspace, external_id=external_id)
        branches = [branch.name for branch in branch_list(conversation=conversation)] if conversation else []
        return [memory_scope_token(ws, Scope.CHAT, external_id), memory_scope_token(ws, Scope.FLOOR, external_id),
                *(memory_scope_token(ws, Scope.BRANCH, branch_scope_id(external_id, name)) for name in branches)]
    if filters.get("scope") in (Scope.GLOBAL, Scope.USER, Scope.CHAT, Scope.BRANCH) and (
            filters.get("scope_id") or filters.get("scope") == Scope.GLOBAL):
        return [memory_scope_token(ws, filters["scope"], filters.get("scope_id") or "")]
    raise ValidationError("query: a search needs user_id, conversation_id, or scope (with scope_id unless global).")


def memory_item_search(*, workspace, filters: Mapping[str, Any]) -> list[tuple[MemoryItem, float]]:
    """Memories ranked by meaning and words for `filters["query"]`, best first,
    each with its relevance (0..1): the recall index's ranking over the scopes
    the filters name (see `_search_scope_tokens`), then the list's other
    filters. Only memories in force unless `status` or `lifecycle_status` asks
    otherwise; only those relevant enough (`RECALL_MIN_RELEVANCE`, see `ranking`)."""
    query = filters.get("query") or ""
    if not query.strip():
        raise ValidationError("query: must not be blank.")
    if len(query) > MAX_QUERY_CHARS:
        raise ValidationError(f"query: at most {MAX_QUERY_CHARS} characters.")
    rest = {name: value for name, value in filters.items() if name not in ("query", "limit", "offset")}
    queryset = memory_item_list(workspace=workspace, filters=rest)
    tokens = _search_scope_tokens(workspace=workspace, filters=filters)
    scored = ranking.rank(workspace_id=workspace.pk, scope_tokens=tokens, query=query,
                          dense=dense_similarities(workspace_id=workspace.pk))
    relevance = {}
    for s in scored:
        if s.hit.kind == RecallKind.MEMORY and s.hit.memory_id not in relevance:
            relevance[s.hit.memory_id] = s.relevance
    if not ("status" in filters or "lifecycle_status" in filters):
        queryset = queryset.filter(status=Status.ACTIVE,
                                   lifecycle_status__in=(LifecycleStatus.ACTIVE, LifecycleStatus.COMPACTED))
    items = {item.pk: item for item in queryset.filter(pk__in=list(relevance)).order_by()}
    return [(items[pk], score) for pk, score in relevance.items() if pk in items]


def memory_item_get(*, workspace, memory_id: str) -> MemoryItem:
    item = MemoryItem.objects.filter(workspace=workspace, pk=memory_id).first()
    if item is None:
        raise NotFoundError(f"No memory '{memory_id}'.")
    return item


def memory_item_stats(*, workspace, filters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Spec 003's statistics over the same filters as the list, in one query.
    `active` / `deprecated` / `pending` count the reported compat status (a
    memory awaiting review is `pending`, never `active`); `pending` and
    `by_lifecycle_status` are extensions. Averages are 0 when nothing matches."""
    if filters and "query" in filters:
        raise ValidationError("query: not a filter of the statistics.")
    queryset = memory_item_list(workspace=workspace, filters=filters).order_by()
    aggregates = {
        "total": Count("pk"),
        "active": Count("pk", filter=Q(status=Status.ACTIVE) & ~Q(lifecycle_status=LifecycleStatus.PENDING)),
        "deprecated": Count("pk", filter=Q(status=Status.DEPRECATED)),
        "avg_importance": Avg("importance"),
        "avg_confidence": Avg("confidence"),
        "estimated_tokens": Sum("token_count_estimate"),
    }
    for item_type in (*STATS_TYPES, MemoryType.DOCUMENT):
        aggregates[f"type_{item_type}"] = Count("pk", filter=Q(type=item_type))
    for lifecycle in ("pending", "active", "compacted", "deprecated"):
        aggregates[f"lifecycle_{lifecycle}"] = Count("pk", filter=Q(lifecycle_status=lifecycle))
    row = queryset.aggregate(**aggregates)
    by_type = {str(t): row[f"type_{t}"] for t in STATS_TYPES}
    if row[f"type_{MemoryType.DOCUMENT}"]:
        by_type[MemoryType.DOCUMENT] = row[f"type_{MemoryType.DOCUMENT}"]
    return {
        "total": row["total"],
        "active": row["active"],
        "deprecated": row["deprecated"],
        "pending": row["lifecycle_pending"],
        "by_type": by_type,
        "by_lifecycle_status": {
            name: row[f"lifecycle_{name}"] for name in ("pending", "active", "compacted", "deprecated")
        },
        "avg_importance": round(row["avg_importance"] or 0.0, 4),
        "avg_confidence": round(row["avg_confidence"] or 0.0, 4),
        "estimated_tokens": row["estimated_tokens"] or 0,
    }
