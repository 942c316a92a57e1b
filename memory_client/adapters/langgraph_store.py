"""LangGraph `BaseStore` over memory-store documents.

`(namespace, key)` is the document at `/<label>/.../<key>` of a memory store
(the workspace's `langgraph` store unless one is named), the value its content
as JSON, so operators review LangGraph memories like any other. A whole
`batch` is one request. TTL (minutes) is kept on the server: reads skip
expired items and the service's maintenance sweep deletes them.
Search `query` ranks by meaning with the embedding model recall uses (by the
share of the query's words an item contains where that model is off).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.base import validate_op_namespace as _validate

from memory_client._transport import Call
from memory_client.adapters._connections import Connections


def _op_wire(op: Op) -> dict[str, Any]:
    if isinstance(op, GetOp):
        return {"op": "get", "namespace": list(op.namespace), "key": op.key, "refresh_ttl": op.refresh_ttl}
    if isinstance(op, SearchOp):
        return {
            "op": "search",
            "namespace_prefix": list(op.namespace_prefix),
            "filter": op.filter,
            "limit": op.limit,
            "offset": op.offset,
            "query": op.query,
            "refresh_ttl": op.refresh_ttl,
        }
    if isinstance(op, PutOp):
        return {
            "op": "put",
            "namespace": list(op.namespace),
            "key": op.key,
            "value": dict(op.value) if op.value is not None else None,
            "ttl": op.ttl,
        }
    if isinstance(op, ListNamespacesOp):
        return {
            "op": "list_namespaces",
            "match_conditions": [
                {"match_type": condition.match_type, "path": list(condition.path)}
                for condition in op.match_conditions or ()
            ],
            "max_depth": op.max_depth,
            "limit": op.limit,
            "offset": op.offset,
        }
    raise ValueError(f"Unknown operation type: {type(op)}")


def _item(data: dict[str, Any], search: bool) -> Item:
    fields = {
        "namespace": tuple(data["namespace"]),
        "key": data["key"],
        "value": data["value"],
        "created_at": datetime.fromisoformat(data["created_at"]),
        "updated_at": datetime.fromisoformat(data["updated_at"]),
    }
    return SearchItem(**fields, score=data.get("score")) if search else Item(**fields)


def _result(op: Op, data: Any) -> Result:
    if isinstance(op, GetOp):
        return _item(data, search=False) if data else None
    if isinstance(op, SearchOp):
        return [_item(item, search=True) for item in data]
    if isinstance(op, ListNamespacesOp):
        return [tuple(namespace) for namespace in data]
    return None


class MemoryLangGraphStore(BaseStore):
    supports_ttl = True

    def __init__(self, config: Any, *, store_id: str | None = None, ttl: TTLConfig | None = None):
        self._conn = Connections(config)
        self.store_id = store_id
        self.ttl_config = ttl

    def _call(self, ops: list[Op]) -> Call:
        for op in ops:
            _validate(op)
        body = {"store_id": self.store_id, "ops": [_op_wire(op) for op in ops]}
        # Puts are upserts by (namespace, key) and deletes of a gone item are
        # no-ops: replaying a batch leaves the same state.
        return Call("POST", "langgraph_store/batch", json=body, retry=True)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if not ops:
            return []
        data = self._conn.run(self._call(ops))
        return [_result(op, result) for op, result in zip(ops, data, strict=True)]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if not ops:
            return []
        data = await self._conn.arun(self._call(ops))
        return [_result(op, result) for op, result in zip(ops, data, strict=True)]
