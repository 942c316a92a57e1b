"""LangGraph store items as memory-store documents: an item `(namespace, key)`
is the document at `/<label>/.../<key>` of a memory store (each segment
percent-encoded where a path could not hold it), its value the document's
content as JSON. Here: the paths, the checks of an op's fields, the store a
batch works on, and get / put of one item. Writes go through the memory-store
services (versions, locks, limits). TTL: the expiry is
`MemoryItem.expires_at`; reads skip expired items and the maintenance sweep
deletes them.
"""

from __future__ import annotations

import json
import math
from datetime import timedelta
from typing import Any
from urllib.parse import quote, unquote

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Workspace
from framework_state.models import StoreDocumentTTL
from memories.models import MemoryItem, MemoryStore
from memories.paths import normalize_path
from memories.services.lineage.routes import store_memory_delete_following_lineage
from memories.services.store_memories import clean_content, store_memory_write
from memories.services.stores import memory_store_create
from memory_project.errors import NotFoundError, ValidationError

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


def check_labels(value: Any, *, field: str, allow_empty: bool) -> list[str]:
    if not isinstance(value, list) or (not value and not allow_empty):
        raise ValidationError(f"{field}: must be a {'' if allow_empty else 'non-empty '}array of strings.")
    for label in value:
        if not isinstance(label, str):
            raise ValidationError(f"{field}: every label must be a string.")
    return value


def check_int(value: Any, *, field: str, default: int, low: int = 0, high: int = MAX_LIMIT) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValidationError(f"{field}: must be an integer between {low} and {high}.")
    return value


def check_ttl(value: Any, *, field: str) -> float | None:
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


def live_items(store: MemoryStore):
    now = timezone.now()
    return MemoryItem.objects.filter(store=store).filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))


def decode_value(item: MemoryItem) -> dict[str, Any] | None:
    try:
        value = json.loads(item.content)
    except ValueError:
        return None  # a document an operator wrote by hand: not a LangGraph item
    return value if isinstance(value, dict) else None


def item_out(item: MemoryItem, value: dict[str, Any], score: float | None = None) -> dict[str, Any]:
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


def ttl_refresh(items: list[MemoryItem]) -> None:
    """Push the expiry of items with a TTL forward from now (TTL counts from last access)."""
    ttls = dict(
        StoreDocumentTTL.objects.filter(memory_id__in=[item.pk for item in items]).values_list("memory_id", "ttl_minutes")
    )
    now = timezone.now()
    for item in items:
        if item.pk in ttls:
            MemoryItem.objects.filter(pk=item.pk).update(expires_at=now + timedelta(minutes=ttls[item.pk]))


def store_get(store: MemoryStore | None, op: dict[str, Any]) -> dict[str, Any] | None:
    namespace = check_labels(op.get("namespace"), field="namespace", allow_empty=True)
    key = op.get("key")
    if not isinstance(key, str):
        raise ValidationError("key: must be a string.")
    if store is None:
        return None
    item = live_items(store).filter(path=to_path(namespace, key)).first()
    value = decode_value(item) if item is not None else None
    if value is None:
        return None
    if op.get("refresh_ttl", True):
        ttl_refresh([item])
    return item_out(item, value)


def check_put(op: dict[str, Any]) -> tuple[str, str | None, float | None]:
    """(path, content or None for a delete, ttl minutes) of a valid put."""
    namespace = check_labels(op.get("namespace"), field="namespace", allow_empty=False)
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
    return path, content, check_ttl(op.get("ttl"), field="ttl")


def store_put(store: MemoryStore, op: dict[str, Any], *, workspace: Workspace, actor: Actor) -> None:
    path, content, ttl = check_put(op)
    if content is None:
        item = MemoryItem.objects.filter(store=store, path=path).first()
        if item is not None:
            store_memory_delete_following_lineage(workspace=workspace, store_id=store.pk, memory_id=item.pk,
                                                  actor=actor)
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
