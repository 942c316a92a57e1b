"""LangGraph store searches and namespace listings: LangGraph's filter
semantics, what the searches of one batch share, and the ranking of a query
(by meaning where recall's embedding model is on, else by words)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db.models import F
from django.utils import timezone

from framework_state.services.meaning import meaning_scores
from framework_state.services.store_items import (
    MAX_SHARED_CANDIDATES,
    check_int,
    check_labels,
    decode_value,
    from_path,
    item_out,
    live_items,
    prefix_path,
)
from memories.models import MemoryItem, MemoryStore
from memory_project.errors import ValidationError

_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def _apply_operator(value: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return value == operand
    if operator == "$ne":
        return value != operand
    try:
        left, right = float(value), float(operand)
    except (TypeError, ValueError):
        return False  # PostgreSQL's jsonb would not match a non-number either
    return {"$gt": left > right, "$gte": left >= right, "$lt": left < right, "$lte": left <= right}[operator]


def _compare(value: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics (JSONB-like): nested objects match
    recursively, arrays element-wise, `$`-operators compare."""
    if isinstance(wanted, dict):
        if any(isinstance(key, str) and key.startswith("$") for key in wanted):
            return all(_apply_operator(value, key, operand) for key, operand in wanted.items())
        if not isinstance(value, dict):
            return False
        return all(_compare(value.get(key), sub) for key, sub in wanted.items())
    if isinstance(wanted, list):
        return (
            isinstance(value, list)
            and len(value) == len(wanted)
            and all(_compare(v, w) for v, w in zip(value, wanted, strict=False))
        )
    return value == wanted


def _check_filter(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValidationError("filter: must be an object.")

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, sub in node.items():
                if isinstance(key, str) and key.startswith("$") and key not in _OPERATORS:
                    raise ValidationError(f"filter: unsupported operator {key}; use one of {', '.join(_OPERATORS)}.")
                walk(sub)
        elif isinstance(node, list):
            for sub in node:
                walk(sub)

    walk(value)
    return value


@dataclass
class _Candidate:
    item: MemoryItem
    value: dict[str, Any]
    lowered: str
    ttl_minutes: float | None


class BatchReads:
    """What the searches of one batch share: each namespace prefix's items are
    read and JSON-decoded once (newest first), not once per search, until a put
    changes the store. A batch of N searches over M items costs M decodes and a
    query per distinct prefix instead of N x M decodes and N scans (500
    searches over 200 items: 8.7 s before). Past `MAX_SHARED_CANDIDATES` items
    under one prefix the memory a copy would take outweighs the saving, and
    each search reads them afresh."""

    def __init__(self) -> None:
        self._shared: dict[str, list[_Candidate]] = {}
        self.refreshed: set[str] = set()

    def candidates(self, store: MemoryStore, prefix: str) -> Iterable[_Candidate]:
        if prefix in self._shared:
            return self._shared[prefix]
        rows = (
            live_items(store)
            .order_by("-updated_at", "-id")
            .only("id", "path", "content", "content_sha256", "created_at", "updated_at")
            .annotate(ttl_minutes=F("langgraph_ttl__ttl_minutes"))
        )
        if prefix != "/":
            rows = rows.filter(path__startswith=prefix)
        if rows[MAX_SHARED_CANDIDATES : MAX_SHARED_CANDIDATES + 1].exists():
            return _decoded(rows)
        self._shared[prefix] = list(_decoded(rows))
        return self._shared[prefix]

    def changed(self) -> None:
        self._shared.clear()


def _decoded(rows) -> Iterator[_Candidate]:
    for item in rows.iterator(chunk_size=500):
        value = decode_value(item)
        if value is not None:
            lowered = item.content.lower()
            item.content = ""  # kept once, as `lowered`, for matching
            yield _Candidate(item, value, lowered, item.ttl_minutes)


def store_search(store: MemoryStore | None, op: dict[str, Any], reads: BatchReads) -> list[dict[str, Any]]:
    prefix = check_labels(op.get("namespace_prefix"), field="namespace_prefix", allow_empty=True)
    wanted = _check_filter(op.get("filter"))
    limit = check_int(op.get("limit"), field="limit", default=10)
    offset = check_int(op.get("offset"), field="offset", default=0, high=10**9)
    query = op.get("query")
    if query is not None and not isinstance(query, str):
        raise ValidationError("query: must be a string.")
    if store is None:
        return []
    terms = [term for term in (query or "").lower().split() if term]
    matching = [
        candidate for candidate in reads.candidates(store, prefix_path(prefix))
        if not wanted or all(_compare(candidate.value.get(key), sub) for key, sub in wanted.items())
    ]
    # A query ranks by meaning where recall's embedding model is on (every
    # match, most similar first, as LangGraph's indexed stores answer); without
    # it, by the share of the query's words an item contains (items with none
    # left out).
    meaning = meaning_scores(query, [(c.item.content_sha256, c.lowered) for c in matching]) if terms and matching else None
    hits: list[tuple[float | None, _Candidate]]
    if meaning is not None:
        hits = list(zip(meaning, matching, strict=True))
    elif terms:
        hits = [(sum(1 for term in terms if term in c.lowered) / len(terms), c) for c in matching]
        hits = [hit for hit in hits if hit[0]]
    else:
        hits = [(None, candidate) for candidate in matching]
    if terms:
        hits.sort(key=lambda hit: -(hit[0] or 0))  # stable: ties keep newest first
    page = hits[offset : offset + limit]
    if page and op.get("refresh_ttl", True):
        # Once per item and batch: the expiry counts from this batch either way.
        due: dict[float, list[str]] = {}
        for _, candidate in page:
            if candidate.ttl_minutes is not None and candidate.item.pk not in reads.refreshed:
                reads.refreshed.add(candidate.item.pk)
                due.setdefault(candidate.ttl_minutes, []).append(candidate.item.pk)
        now = timezone.now()
        for minutes, ids in due.items():
            MemoryItem.objects.filter(pk__in=ids).update(expires_at=now + timedelta(minutes=minutes))
    return [item_out(c.item, c.value, score) for score, c in page]


def _matches(condition: dict[str, Any], namespace: tuple[str, ...]) -> bool:
    path = condition["path"]
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path, strict=False) if condition["match_type"] == "prefix" else zip(
        reversed(namespace), reversed(path), strict=False
    )
    return all(want == "*" or have == want for have, want in pairs)


def store_list_namespaces(store: MemoryStore | None, op: dict[str, Any]) -> list[list[str]]:
    conditions = op.get("match_conditions") or []
    if not isinstance(conditions, list):
        raise ValidationError("match_conditions: must be an array.")
    for condition in conditions:
        if not isinstance(condition, dict) or condition.get("match_type") not in ("prefix", "suffix"):
            raise ValidationError("match_conditions[]: match_type must be 'prefix' or 'suffix'.")
        check_labels(condition.get("path"), field="match_conditions[].path", allow_empty=True)
    max_depth = op.get("max_depth")
    if max_depth is not None:
        max_depth = check_int(max_depth, field="max_depth", default=0, low=1, high=100)
    limit = check_int(op.get("limit"), field="limit", default=100)
    offset = check_int(op.get("offset"), field="offset", default=0, high=10**9)
    if store is None:
        return []
    rows = live_items(store)
    for condition in conditions:
        # A literal prefix narrows the scan in the database; wildcards are matched below.
        literal = []
        for label in condition["path"] if condition["match_type"] == "prefix" else []:
            if label == "*":
                break
            literal.append(label)
        if literal:
            rows = rows.filter(path__startswith=prefix_path(literal))
    found: set[tuple[str, ...]] = set()
    for path in rows.values_list("path", flat=True).iterator(chunk_size=2000):
        namespace, _ = from_path(path)
        if not namespace or not all(_matches(condition, namespace) for condition in conditions):
            continue
        found.add(namespace[:max_depth] if max_depth else namespace)
    return [list(namespace) for namespace in sorted(found)[offset : offset + limit]]
