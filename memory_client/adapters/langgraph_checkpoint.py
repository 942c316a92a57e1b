"""LangGraph `BaseCheckpointSaver` over the memory service (sync and async).

A thread is a conversation. Checkpoints and pending writes travel as the
saver's serializer wrote them (`serde.dumps_typed`: a type string and bytes,
base64 on the wire), so any serializer round-trips unchanged.

Puts and writes go through a group commit: LangGraph saves from background
threads (tasks, when async), a step's writes beside the checkpoint put before
them, and what is asked for at once travels as one `batch` request. Each call
still returns only once its own data is stored.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import random
import weakref
from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from typing import Any

from langchain_core.load.mapping import _JS_SERIALIZABLE_MAPPING, SERIALIZABLE_MAPPING
from langchain_core.load.serializable import Serializable
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from memory_client._transport import Call, data_of, nothing
from memory_client.adapters._connections import Connections
from memory_client.adapters._group_commit import AsyncGroupCommit, GroupCommit
from memory_client.errors import MemoryNotFoundError, MemoryValidationError

PAGE_SIZE = 100
# The most ops the server takes in one batch request.
BATCH_OPS = 100


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _chunks(ops: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The ops in batches the server takes (at most `BATCH_OPS`)."""
    return [ops[start : start + BATCH_OPS] for start in range(0, len(ops), BATCH_OPS)]


def _is_put(op: dict[str, Any]) -> bool:
    # LangGraph's next put waits for this one; writes wait on nothing.
    return op["op"] == "put"


# A LangChain object's import path -> the id LangGraph.js knows it by.
_JS_IDS = {path: list(js_id) for js_id, path in _JS_SERIALIZABLE_MAPPING.items()}


def _js_default(value: Any) -> Any:
    if isinstance(value, Serializable):
        data = value.to_json()
        if data.get("type") == "constructor":
            path = SERIALIZABLE_MAPPING.get(tuple(data["id"]), tuple(data["id"]))
            data = {**data, "id": _JS_IDS.get(tuple(path), data["id"])}
        return data
    if isinstance(value, set | frozenset):
        return {"lc": 2, "type": "constructor", "id": ["Set"], "method": None, "args": [list(value)], "kwargs": {}}
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"{type(value).__name__} cannot be written as LangGraph.js JSON")


class LangGraphJsonSerializer(JsonPlusSerializer):
    """Writes checkpoints as LangGraph.js's `JsonPlusSerializer` does (type
    `json`, LangChain objects under their JS ids) and reads both languages'.
    A thread shared between a Python and a Node checkpointer is written with
    it on the Python side (`langgraph_checkpointer_for(serde=LangGraphJsonSerializer())`):
    the default Python serializer writes msgpack, which LangGraph.js cannot read."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        if isinstance(obj, bytes):
            return "bytes", obj
        return "json", json.dumps(obj, default=_js_default, ensure_ascii=False).encode()


class MemoryCheckpointSaver(BaseCheckpointSaver[str]):
    def __init__(self, config: Any, *, serde: Any = None):
        super().__init__(serde=serde)
        self._conn = Connections(config)
        self._saves = GroupCommit(self._send, urgent=_is_put)
        self._asaves: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncGroupCommit[dict[str, Any]]] = (
            weakref.WeakKeyDictionary()
        )
        # Off once a server without the batch endpoint answered 404.
        self._batches = True

    # --- Wire <-> LangGraph ---------------------------------------------------

    def _tuple(self, data: dict[str, Any]) -> CheckpointTuple:
        thread_id, ns = data["thread_id"], data["checkpoint_ns"]
        checkpoint = self.serde.loads_typed((data["type"], base64.b64decode(data["checkpoint"])))
        parent = data.get("parent_checkpoint_id")
        return CheckpointTuple(
            config={"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": data["checkpoint_id"]}},
            checkpoint=checkpoint,
            metadata=data.get("metadata") or {},
            parent_config=(
                {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": parent}} if parent else None
            ),
            pending_writes=[
                (write["task_id"], write["channel"], self.serde.loads_typed((write["type"], base64.b64decode(write["value"]))))
                for write in data.get("pending_writes") or []
            ],
        )

    @staticmethod
    def _tuple_call(config: RunnableConfig) -> Call:
        configurable = config["configurable"]
        params = {
            "thread_id": configurable["thread_id"],
            "checkpoint_ns": configurable.get("checkpoint_ns", ""),
            "checkpoint_id": get_checkpoint_id(config),
        }
        return Call("GET", "langgraph_checkpoints/tuple", params=params)

    @staticmethod
    def _list_params(
        config: RunnableConfig | None, filter: dict[str, Any] | None, before: RunnableConfig | None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {}
        configurable = (config or {}).get("configurable") or {}
        if "thread_id" in configurable:
            params["thread_id"] = configurable["thread_id"]
        if "checkpoint_ns" in configurable:
            params["checkpoint_ns"] = configurable["checkpoint_ns"]
        if configurable.get("checkpoint_id"):
            params["checkpoint_id"] = configurable["checkpoint_id"]
        if before is not None and get_checkpoint_id(before):
            params["before"] = get_checkpoint_id(before)
        if filter:
            params["filter"] = json.dumps(filter)
        return params

    def _put_op(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata
    ) -> tuple[dict[str, Any], RunnableConfig]:
        configurable = config["configurable"]
        thread_id, ns = configurable["thread_id"], configurable.get("checkpoint_ns", "")
        type_, data = self.serde.dumps_typed(checkpoint)
        op = {
            "op": "put",
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint["id"],
            "parent_checkpoint_id": configurable.get("checkpoint_id"),
            "type": type_,
            "checkpoint": _b64(data),
            "metadata": get_serializable_checkpoint_metadata(config, metadata),
        }
        return op, {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def _writes_op(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str
    ) -> dict[str, Any]:
        configurable = config["configurable"]
        rows = []
        for idx, (channel, value) in enumerate(writes):
            type_, data = self.serde.dumps_typed(value)
            rows.append({"idx": WRITES_IDX_MAP.get(channel, idx), "channel": channel, "type": type_, "value": _b64(data)})
        return {
            "op": "put_writes",
            "thread_id": configurable["thread_id"],
            "checkpoint_ns": configurable.get("checkpoint_ns", ""),
            "checkpoint_id": configurable["checkpoint_id"],
            "task_id": task_id,
            "task_path": task_path,
            "writes": rows,
        }

    # A put is an upsert by (thread, namespace, id); regular writes are
    # insert-or-ignore and special ones overwrite: every save is safe to retry.

    @staticmethod
    def _op_call(op: dict[str, Any]) -> Call:
        body = {key: value for key, value in op.items() if key != "op"}
        path = "langgraph_checkpoints" if op["op"] == "put" else "langgraph_checkpoints/writes"
        return Call("POST", path, json=body, parse=nothing, retry=True)

    @staticmethod
    def _batch_call(ops: list[dict[str, Any]]) -> Call:
        return Call("POST", "langgraph_checkpoints/batch", json={"ops": ops}, parse=data_of, retry=True)

    def _send_flow(self, ops: list[dict[str, Any]]) -> Generator[Call, Any, list[Any]]:
        """The group commit's sender, for sync and async calls alike (driven
        by `Connections.run_flow` / `arun_flow`): one answer (or exception)
        per op. A lone op goes as its own request, several as batches of at
        most `BATCH_OPS`. A batch refused (one bad op; nothing was stored) is
        sent op by op, so each caller gets its own op's answer; a batch that
        fails otherwise fails its own ops only."""
        results: list[Any] = []
        for chunk in _chunks(ops):
            if len(chunk) > 1 and self._batches:
                try:
                    results += yield self._batch_call(chunk)
                    continue
                except MemoryValidationError:
                    pass
                except MemoryNotFoundError:
                    self._batches = False  # a server from before the batch endpoint
                except Exception as exc:
                    results += [exc] * len(chunk)
                    continue
            for op in chunk:
                try:
                    results.append((yield self._op_call(op)))
                except Exception as exc:  # that op's caller raises it
                    results.append(exc)
        return results

    def _send(self, ops: list[dict[str, Any]]) -> list[Any]:
        return self._conn.run_flow(self._send_flow(ops))

    async def _asend(self, ops: list[dict[str, Any]]) -> list[Any]:
        return await self._conn.arun_flow(self._send_flow(ops))

    def _asaves_here(self) -> AsyncGroupCommit[dict[str, Any]]:
        # A group commit per event loop, as the connections are.
        loop = asyncio.get_running_loop()
        saves = self._asaves.get(loop)
        if saves is None:
            saves = self._asaves[loop] = AsyncGroupCommit(self._asend, urgent=_is_put)
        return saves

    def get_next_version(self, current: str | None, channel: None) -> str:
        """Zero-padded, string-comparable versions, as LangGraph's own savers make."""
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

    # --- Sync -----------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        data = self._conn.run(self._tuple_call(config))
        return self._tuple(data) if data else None

    def list(
        self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None, limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        params = self._list_params(config, filter, before)
        remaining = limit
        while remaining is None or remaining > 0:
            size = PAGE_SIZE if remaining is None else min(PAGE_SIZE, remaining)
            page = self._conn.run(Call("GET", "langgraph_checkpoints", params={**params, "limit": size}, parse=lambda r: r.json()))
            for data in page["data"]:
                yield self._tuple(data)
            if remaining is not None:
                remaining -= len(page["data"])
            cursor = page["meta"].get("next_cursor")
            if not cursor:
                return
            params["cursor"] = cursor

    def put(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
    ) -> RunnableConfig:
        op, stored = self._put_op(config, checkpoint, metadata)
        self._saves.run(op)
        return stored

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = "") -> None:
        if writes:
            self._saves.run(self._writes_op(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self._conn.run(Call("POST", "langgraph_checkpoints/delete_thread", json={"thread_id": str(thread_id)}, parse=nothing, retry=True))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        if run_ids:
            self._conn.run(Call("POST", "langgraph_checkpoints/delete_for_runs", json={"run_ids": [str(r) for r in run_ids]}, retry=True))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        body = {"source_thread_id": str(source_thread_id), "target_thread_id": str(target_thread_id)}
        self._conn.run(Call("POST", "langgraph_checkpoints/copy_thread", json=body, retry=True))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        if thread_ids:
            body = {"thread_ids": [str(t) for t in thread_ids], "strategy": strategy}
            self._conn.run(Call("POST", "langgraph_checkpoints/prune", json=body, retry=True))

    # --- Async ----------------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        data = await self._conn.arun(self._tuple_call(config))
        return self._tuple(data) if data else None

    async def alist(
        self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None, limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        params = self._list_params(config, filter, before)
        remaining = limit
        while remaining is None or remaining > 0:
            size = PAGE_SIZE if remaining is None else min(PAGE_SIZE, remaining)
            page = await self._conn.arun(
                Call("GET", "langgraph_checkpoints", params={**params, "limit": size}, parse=lambda r: r.json())
            )
            for data in page["data"]:
                yield self._tuple(data)
            if remaining is not None:
                remaining -= len(page["data"])
            cursor = page["meta"].get("next_cursor")
            if not cursor:
                return
            params["cursor"] = cursor

    async def aput(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
    ) -> RunnableConfig:
        op, stored = self._put_op(config, checkpoint, metadata)
        await self._asaves_here().run(op)
        return stored

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        if writes:
            await self._asaves_here().run(self._writes_op(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._conn.arun(
            Call("POST", "langgraph_checkpoints/delete_thread", json={"thread_id": str(thread_id)}, parse=nothing, retry=True)
        )

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        if run_ids:
            await self._conn.arun(
                Call("POST", "langgraph_checkpoints/delete_for_runs", json={"run_ids": [str(r) for r in run_ids]}, retry=True)
            )

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        body = {"source_thread_id": str(source_thread_id), "target_thread_id": str(target_thread_id)}
        await self._conn.arun(Call("POST", "langgraph_checkpoints/copy_thread", json=body, retry=True))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        if thread_ids:
            body = {"thread_ids": [str(t) for t in thread_ids], "strategy": strategy}
            await self._conn.arun(Call("POST", "langgraph_checkpoints/prune", json=body, retry=True))
