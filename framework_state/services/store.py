"""LangGraph's `BaseStore` over memory-store documents (see
`framework_state.services.store_items` for how an item is kept, and
`store_search` for searches): one request runs a whole `batch` of ops in
order, so a LangGraph step costs one round trip.
"""

from __future__ import annotations

from typing import Any

from accounts.actors import Actor
from accounts.models import Workspace
from framework_state.services.store_items import MAX_OPS_PER_BATCH, check_put, resolve_store, store_get, store_put
from framework_state.services.store_search import BatchReads, store_list_namespaces, store_search
from memory_project.errors import PermissionDeniedError, ValidationError


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
            check_put(op)  # every put is valid before the first one is written
    if writes and read_only:
        raise PermissionDeniedError("This API key is read-only.")
    store = resolve_store(workspace=workspace, store_id=store_id, create=writes)
    reads = BatchReads()
    results: list[Any] = []
    for op in ops:
        kind = op["op"]
        if kind == "get":
            results.append(store_get(store, op))
        elif kind == "search":
            results.append(store_search(store, op, reads))
        elif kind == "list_namespaces":
            results.append(store_list_namespaces(store, op))
        else:
            store_put(store, op, workspace=workspace, actor=actor)
            reads.changed()
            results.append(None)
    return results
