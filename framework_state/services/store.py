"""LangGraph's `BaseStore` over memory-store documents.

An item `(namespace, key)` is the document at `/<label>/.../<key>` of a memory
store (each segment percent-encoded where a path could not hold it), its value
the document's content as JSON; operators review and edit them like any other
memory. Writes go through the memory-store services (versions, locks, limits).
TTL: the expiry is `MemoryItem.expires_at`; reads skip expired items and the
maintenance sweep deletes them.

One request runs a whole `batch` of ops in order, so a LangGraph step costs one
round trip.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import quote, unquote

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Workspace
from framework_state.models import StoreDocumentTTL
from framework_state.services.meaning import meaning_scores
from memories.models import MemoryItem, MemoryStore
from memories.paths import normalize_path
from memories.services.store_memories import clean_content, store_memory_delete, store_memory_write
from memories.services.stores import memory_store_create
from memory_project.errors import NotFoundError, PermissionDeniedError, ValidationError

DEFAULT_STORE_NAME = "langgraph"
MAX_OPS_PER_BATCH = 500
MAX_SHARED_CANDIDATES = 10_000
MAX_LIMIT = 1000
# Characters kept readable in a path segment; everything else is %-encoded.
_SAFE = " !$&'()*+,;=:@~"


def encode_label(label: str) -> str:
    segment = quote(label, safe=_SAFE)
    if segment in ("", ".", ".."):
        # Empty and dot segments are not valid paths; %-encoded they are.
        segment = "".join(f"%{ord(ch):02X}" for ch in label) or "%00"
    return segment


def decode_label(segment: str) -> str:
    return "" if segment == "%00" else unquote(segment)


def to_path(namespace: list[str], key: str) -> str:
    return "/" + "/".join(encode_label(label) for label in [*namespace, key])


def from_path(path: str) -> tuple[tuple[str, ...], str]:
    segments = [decode_label(segment) for segment in path.lstrip("/").split("/")]
    return tuple(segments[:-1]), segments[-1]


def prefix_path(namespace: list[str]) -> str:
    return "/" + "".join(encode_label(label) + "/" for label in namespace)


# --- Validation -----------------------------------------------------------------


def _labels(value: Any, *, field: str, allow_empty: bool) -> list[str]:
    if not isinstance(value, list) or (not value and not allow_empty):
        raise ValidationError(f"{field}: must be a {'' if allow_empty else 'non-empty '}array of strings.")
    for label in value:
        if not isinstance(label, str):
            raise ValidationError(f"{field}: every label must be a string.")
    return value


def _int(value: Any, *, field: str, default: int, low: int = 0, high: int = MAX_LIMIT) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValidationError(f"{field}: must be an integer between {low} and {high}.")
    return value


def _ttl(value: Any, *, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValidationError(f"{field}: must be a positive number of minutes.")
    return float(value)


# --- The store ------------------------------------------------------------------


def resolve_store(*, workspace: Workspace, store_id: str | None, create: bool) -> MemoryStore | None:
    """The named store, or the workspace's default `langgraph` store (created on first write)."""
    if store_id is not None and not isinstance(store_id, str):
        raise ValidationError("store_id: must be a string.")
    if store_id:
        store = MemoryStore.objects.filter(workspace=workspace, pk=store_id).first()
        if store is None:
            raise NotFoundError(f"No memory store '{store_id}'.")
        return store
    store = MemoryStore.objects.filter(workspace=workspace, name=DEFAULT_STORE_NAME, metadata__source="langgraph").order_by("created_at").first()
    if store is None and create:
        with transaction.atomic():
            # The workspace row lock makes creating the default store race-free.
            Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
            store = MemoryStore.objects.filter(
                workspace=workspace, name=DEFAULT_STORE_NAME, metadata__source="langgraph"
            ).first() or memory_store_create(
                workspace=workspace,
                name=DEFAULT_STORE_NAME,
                description="Items of LangGraph's BaseStore, one document per (namespace, key).",
                metadata={"source": "langgraph"},
            )
    return store


def _live(store: MemoryStore):
    now = timezone.now()
    return MemoryItem.objects.filter(store=store).filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))


def _decode_value(item: MemoryItem) -> dict[str, Any] | None:
    try:
        value = json.loads(item.content)
    except ValueError:
        return None  # a document an operator wrote by hand: not a LangGraph item
    return value if isinstance(value, dict) else None


def _item_out(item: MemoryItem, value: dict[str, Any], score: float | None = None) -> dict[str, Any]:
    namespace, key = from_path(item.path)
    out = {
        "namespace": list(namespace),
        "key": key,
        "value": value,
        "created_at": item.created_at.isoformat(),
        "updated_at": item.updated_at.isoformat(),
    }
    if score is not None:
        out["score"] = score
    return out


def _refresh(items: list[MemoryItem]) -> None:
    """Push the expiry of items with a TTL forward from now (TTL counts from last access)."""
    ttls = dict(
        StoreDocumentTTL.objects.filter(memory_id__in=[item.pk for item in items]).values_list("memory_id", "ttl_minutes")
    )
    now = timezone.now()
    for item in items:
        if item.pk in ttls:
            MemoryItem.objects.filter(pk=item.pk).update(expires_at=now + timedelta(minutes=ttls[item.pk]))


def _get(store: MemoryStore | None, op: dict[str, Any]) -> dict[str, Any] | None:
    namespace = _labels(op.get("namespace"), field="namespace", allow_empty=True)
    key = op.get("key")
    if not isinstance(key, str):
        raise ValidationError("key: must be a string.")
    if store is None:
        return None
    item = _live(store).filter(path=to_path(namespace, key)).first()
    value = _decode_value(item) if item is not None else None
    if value is None:
        return None
    if op.get("refresh_ttl", True):
        _refresh([item])
    return _item_out(item, value)


def _check_put(op: dict[str, Any]) -> tuple[str, str | None, float | None]:
    """(path, content or None for a delete, ttl minutes) of a valid put."""
    namespace = _labels(op.get("namespace"), field="namespace", allow_empty=False)
    key = op.get("key")
    if not isinstance(key, str):
        raise ValidationError("key: must be a string.")
    path = normalize_path(to_path(namespace, key), field="namespace/key")
    value = op.get("value")
    if value is None:
        return path, None, None
    if not isinstance(value, dict):
        raise ValidationError("value: must be an object (or null to delete).")
    try:
        content = clean_content(json.dumps(value, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"value: not representable as JSON ({exc}).")
    return path, content, _ttl(op.get("ttl"), field="ttl")


def _put(store: MemoryStore, op: dict[str, Any], *, workspace: Workspace, actor: Actor) -> None:
    path, content, ttl = _check_put(op)
    if content is None:
        item = MemoryItem.objects.filter(store=store, path=path).first()
        if item is not None:
            store_memory_delete(workspace=workspace, store_id=store.pk, memory_id=item.pk, actor=actor)
        return
    item, _ = store_memory_write(workspace=workspace, store_id=store.pk, path=path, content=content, actor=actor)
    # An identical rewrite writes no version; LangGraph still expects the item
    # to count as written now.
    expires_at = timezone.now() + timedelta(minutes=ttl) if ttl is not None else None
    MemoryItem.objects.filter(pk=item.pk).update(updated_at=timezone.now(), expires_at=expires_at)
    if ttl is None:
        StoreDocumentTTL.objects.filter(memory_id=item.pk).delete()
    else:
        StoreDocumentTTL.objects.update_or_create(memory_id=item.pk, defaults={"ttl_minutes": ttl})


# --- Search and namespaces ------------------------------------------------------

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


class _BatchReads:
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
            _live(store)
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
        value = _decode_value(item)
        if value is not None:
            lowered = item.content.lower()
            item.content = ""  # kept once, as `lowered`, for matching
            yield _Candidate(item, value, lowered, item.ttl_minutes)


def _search(store: MemoryStore | None, op: dict[str, Any], reads: _BatchReads) -> list[dict[str, Any]]:
    prefix = _labels(op.get("namespace_prefix"), field="namespace_prefix", allow_empty=True)
    wanted = _check_filter(op.get("filter"))
    limit = _int(op.get("limit"), field="limit", default=10)
    offset = _int(op.get("offset"), field="offset", default=0, high=10**9)
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
    return [_item_out(c.item, c.value, score) for score, c in page]


def _matches(condition: dict[str, Any], namespace: tuple[str, ...]) -> bool:
    path = condition["path"]
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path, strict=False) if condition["match_type"] == "prefix" else zip(
        reversed(namespace), reversed(path), strict=False
    )
    return all(want == "*" or have == want for have, want in pairs)


def _list_namespaces(store: MemoryStore | None, op: dict[str, Any]) -> list[list[str]]:
    conditions = op.get("match_conditions") or []
    if not isinstance(conditions, list):
        raise ValidationError("match_conditions: must be an array.")
    for condition in conditions:
        if not isinstance(condition, dict) or condition.get("match_type") not in ("prefix", "suffix"):
            raise ValidationError("match_conditions[]: match_type must be 'prefix' or 'suffix'.")
        _labels(condition.get("path"), field="match_conditions[].path", allow_empty=True)
    max_depth = op.get("max_depth")
    if max_depth is not None:
        max_depth = _int(max_depth, field="max_depth", default=0, low=1, high=100)
    limit = _int(op.get("limit"), field="limit", default=100)
    offset = _int(op.get("offset"), field="offset", default=0, high=10**9)
    if store is None:
        return []
    rows = _live(store)
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


# --- The batch ------------------------------------------------------------------


def store_batch(
    *, workspace: Workspace, store_id: str | None, ops: Any, actor: Actor, read_only: bool
) -> list[Any]:
    """Run LangGraph store ops in order; one result per op (`None` for a put).

    Not one transaction: like LangGraph's own stores, each put commits on its
    own, and a later op sees the earlier ones.
    """
    if not isinstance(ops, list) or len(ops) > MAX_OPS_PER_BATCH:
        raise ValidationError(f"ops: must be an array of at most {MAX_OPS_PER_BATCH} ops.")
    kinds = []
    for index, op in enumerate(ops):
        if not isinstance(op, dict) or op.get("op") not in ("get", "search", "put", "list_namespaces"):
            raise ValidationError(f"ops[{index}].op: must be one of get, search, put, list_namespaces.")
        kinds.append(op["op"])
    writes = "put" in kinds
    for op in ops:
        if op["op"] == "put":
            _check_put(op)  # every put is valid before the first one is written
    if writes and read_only:
        raise PermissionDeniedError("This API key is read-only.")
    store = resolve_store(workspace=workspace, store_id=store_id, create=writes)
    reads = _BatchReads()
    results: list[Any] = []
    for op in ops:
        kind = op["op"]
        if kind == "get":
            results.append(_get(store, op))
        elif kind == "search":
            results.append(_search(store, op, reads))
        elif kind == "list_namespaces":
            results.append(_list_namespaces(store, op))
        else:
            _put(store, op, workspace=workspace, actor=actor)
            reads.changed()
            results.append(None)
    return results
