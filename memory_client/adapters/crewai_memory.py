"""CrewAI's memory (`crewai.memory.Memory`, crewai 1.x) kept by the service.

`MemoryCrewAIStorage` is a crewai `StorageBackend`: a crew's memories are
facts in the service's `user` scope keyed by the crew (`user_id`, by default
`crew:<crew name>`), so they are searched by meaning through the recall index,
reviewed in the admin and erased like any user's memories. A record's crewai
scope (`/crew/<name>/agent/<role>` ...) is the fact's `fact_key`; scope
views (`list_scopes`, `get_scope_info`, a prefix search) read the crew's
memories page by page and keep those under the prefix.

crewai hands a storage backend vectors, never text: its `Memory` embeds the
text itself and passes the vector on. The service ranks by meaning with its
own embedding model, so the storage needs the text. `TextHandles` is the
embedder paired with the storage: each text gets a vector that names it (64
components from its BLAKE2b digest), and the storage turns a vector back into
its text to search. Distinct texts get near-orthogonal handles, so crewai's
own duplicate check within a batch still drops only identical texts.

What the service keeps of a record: its text, scope (lower-cased, as fact
keys are), importance, times, and its categories, metadata and source in the
memory's `metadata` (`{"categories": [...], "metadata": {...}, "source": ...}`).
A filter by categories (any of them) or metadata (every key equal) is applied
here, as crewai's own storages apply it, to the rows the service ranked or
listed. Private records are refused: the service has no per-source privacy
inside a scope (give the source a `user_id` of its own).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import threading
from collections import OrderedDict
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from crewai.memory.storage.backend import StorageBackend
from crewai.memory.types import MemoryRecord, ScopeInfo
from crewai.memory.unified_memory import Memory
from crewai.memory.utils import sanitize_scope_name

from memory_client import _operations as ops
from memory_client.adapters._connections import Connections
from memory_client.errors import MemoryNotFoundError

HANDLE_BYTES = 64
# Texts remembered for their handles. crewai embeds a text and searches with
# it within one save or recall, so only a burst's worth must be held.
HANDLE_CAPACITY = 4096
# The service's limits for one list page and one batch delete.
PAGE_SIZE = 100
BATCH_IDS = 100
MEMORY_TYPE = "fact"
# The service's longest search query. crewai searches with whole texts (a new
# memory's, to find what it repeats; a task's description): their start is
# what is searched for.
QUERY_CHARS = 2000


class TextHandles:
    """The embedder to pair with `MemoryCrewAIStorage` (`Memory(embedder=...)`):
    a callable from texts to vectors, as crewai's embedders are."""

    def __init__(self, capacity: int = HANDLE_CAPACITY):
        self._texts: OrderedDict[bytes, str] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def __call__(self, input: list[str]) -> list[list[float]]:  # noqa: A002 (chromadb's parameter name)
        return [self._handle(text) for text in input]

    def _handle(self, text: str) -> list[float]:
        digest = hashlib.blake2b(text.encode("utf-8"), digest_size=HANDLE_BYTES).digest()
        with self._lock:
            self._texts[digest] = text
            self._texts.move_to_end(digest)
            while len(self._texts) > self._capacity:
                self._texts.popitem(last=False)
        return [(byte - 127.5) / 127.5 for byte in digest]

    def text_of(self, vector: list[float]) -> str:
        """The text a handle names; ValueError for a vector this embedder did not make."""
        if len(vector) != HANDLE_BYTES:
            raise ValueError(
                f"a {len(vector)}-dimensional vector: this storage searches with the vectors of its own "
                "embedder (pass Memory(embedder=storage.embedder), as crewai_memory() does)"
            )
        digest = bytes(min(255, max(0, round(value * 127.5 + 127.5))) for value in vector)
        with self._lock:
            text = self._texts.get(digest)
        if text is None:
            raise ValueError("a vector this storage's embedder did not make (or made too long ago)")
        return text


def _naive_utc(milliseconds: int | None) -> datetime | None:
    # crewai compares record times with datetime.utcnow(): naive UTC.
    if milliseconds is None:
        return None
    return datetime.fromtimestamp(milliseconds / 1000, tz=UTC).replace(tzinfo=None)


def _milliseconds(moment: datetime) -> int:
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return int(aware.timestamp() * 1000)


def _scope_path(scope: str | None) -> str:
    inner = (scope or "").strip().strip("/").lower()
    return "/" + inner if inner else "/"


def _under(scope: str, prefix: str | None) -> bool:
    prefix_path = _scope_path(prefix)
    return prefix_path == "/" or scope == prefix_path or scope.startswith(prefix_path + "/")


class MemoryCrewAIStorage(StorageBackend):
    """crewai's `StorageBackend` over the memories of one service scope."""

    def __init__(self, config: Any, *, user_id: str, embedder: TextHandles | None = None):
        if not user_id:
            raise ValueError("user_id: the service scope of the crew's memories must be named")
        self._conn = Connections(config)
        self.user_id = user_id
        self.embedder = embedder or TextHandles()

    # --- mapping ----------------------------------------------------------------

    def _record(self, row: dict[str, Any]) -> MemoryRecord:
        created = _naive_utc(row["created_at"])
        kept = row.get("metadata") or {}
        return MemoryRecord(
            id=row["id"],
            content=row["content"],
            scope=_scope_path(row.get("fact_key")),
            categories=list(kept.get("categories") or []),
            metadata=dict(kept.get("metadata") or {}),
            importance=row["importance"],
            created_at=created,
            last_accessed=_naive_utc(row.get("last_used_at")) or _naive_utc(row["updated_at"]) or created,
            source=kept.get("source"),
        )

    @staticmethod
    def _service_metadata(record: MemoryRecord) -> dict[str, Any]:
        kept: dict[str, Any] = {"categories": list(record.categories), "metadata": dict(record.metadata)}
        if record.source is not None:
            kept["source"] = record.source
        return kept

    @staticmethod
    def _wanted(record: MemoryRecord, categories: list[str] | None, metadata_filter: dict[str, Any] | None) -> bool:
        if categories and not any(category in record.categories for category in categories):
            return False
        return not metadata_filter or all(record.metadata.get(k) == v for k, v in metadata_filter.items())

    def _list_params(self, **extra: Any) -> dict[str, Any]:
        return {"scope": "user", "scope_id": self.user_id, "type": MEMORY_TYPE, "status": "active", **extra}

    def _records(self, scope_prefix: str | None = None, **filters: Any) -> Iterator[MemoryRecord]:
        """The crew's memories in force under `scope_prefix`, newest first, page by page."""
        offset = 0
        while True:
            page = self._conn.run(ops.list_memories(**self._list_params(
                sort_by="created_at", sort_order="desc", limit=PAGE_SIZE, offset=offset, **filters)))
            for row in page.data:
                record = self._record(row)
                if _under(record.scope, scope_prefix):
                    yield record
            if page.next_offset is None or not page.data:
                return
            offset = page.next_offset

    def _check_saveable(self, record: MemoryRecord) -> None:
        if record.private:
            raise ValueError(
                "a private memory: the service keeps no per-source privacy inside a scope; "
                "give its source a storage (user_id) of its own"
            )

    # --- StorageBackend -----------------------------------------------------------

    def save(self, records: list[MemoryRecord]) -> None:
        """Creates one memory per record; each record takes the service's id
        (and its scope as kept)."""
        for record in records:
            self._check_saveable(record)
        for record in records:
            record.scope = _scope_path(record.scope)
            created = self._conn.run(ops.create_memory(
                scope="user", scope_id=self.user_id, type=MEMORY_TYPE, content=record.content,
                fact_key=record.scope, importance=record.importance, metadata=self._service_metadata(record)))
            record.id = created["id"]

    def _search_call(self, query_embedding: list[float], limit: int, scope_prefix: str | None, filtered: bool):
        # A prefix and a filter are applied on this side: ask for a full page
        # to keep `limit` of what passes them.
        size = limit if _scope_path(scope_prefix) == "/" and not filtered else PAGE_SIZE
        return ops.search_memories(query=self.embedder.text_of(query_embedding)[:QUERY_CHARS], user_id=self.user_id,
                                   type=MEMORY_TYPE, limit=max(1, min(size, PAGE_SIZE)))

    def _matches(self, page: Any, scope_prefix: str | None, limit: int, min_score: float,
                 categories: list[str] | None, metadata_filter: dict[str, Any] | None
                 ) -> list[tuple[MemoryRecord, float]]:
        found = [(self._record(row), row["score"]) for row in page.data if row["score"] >= min_score]
        return [(record, score) for record, score in found
                if _under(record.scope, scope_prefix) and self._wanted(record, categories, metadata_filter)][:limit]

    def search(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """The crew's memories closest in meaning to the text behind
        `query_embedding`, with the service's relevance (0..1), best first."""
        page = self._conn.run(self._search_call(query_embedding, limit, scope_prefix,
                                                bool(categories or metadata_filter)))
        return self._matches(page, scope_prefix, limit, min_score, categories, metadata_filter)

    def delete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        if record_ids is not None:
            # Only the crew's own memories, whatever ids are asked for.
            records = [record for record in map(self.get_record, dict.fromkeys(record_ids)) if record is not None]
            ids = [r.id for r in records if _under(r.scope, scope_prefix)
                   and (older_than is None or r.created_at < _naive_utc(_milliseconds(older_than)))
                   and self._wanted(r, categories, metadata_filter)]
        else:
            filters = {"created_to": _milliseconds(older_than) - 1} if older_than else {}
            ids = [record.id for record in self._records(scope_prefix, **filters)
                   if self._wanted(record, categories, metadata_filter)]
        deleted = 0
        for start in range(0, len(ids), BATCH_IDS):
            result = self._conn.run(ops.batch_delete_memories(ids=ids[start:start + BATCH_IDS]))
            deleted += sum(1 for row in result["results"] if row["result"] == "deleted")
        return deleted

    def update(self, record: MemoryRecord) -> None:
        self._check_saveable(record)
        if self.get_record(record.id) is None:
            raise ValueError(f"no memory {record.id!r} in this storage")
        record.scope = _scope_path(record.scope)
        self._conn.run(ops.update_memory(memory_id=record.id, content=record.content, fact_key=record.scope,
                                         importance=record.importance, metadata=self._service_metadata(record)))

    def get_record(self, record_id: str) -> MemoryRecord | None:
        try:
            row = self._conn.run(ops.get_memory(memory_id=record_id))
        except MemoryNotFoundError:
            return None
        if (row["scope"], row["scope_id"], row["type"], row["status"]) != ("user", self.user_id, MEMORY_TYPE,
                                                                              "active"):
            return None
        return self._record(row)

    def list_records(self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0) -> list[MemoryRecord]:
        return list(itertools.islice(self._records(scope_prefix), offset, offset + limit))

    def get_scope_info(self, scope: str) -> ScopeInfo:
        path = _scope_path(scope)
        records = list(self._records(path))
        return ScopeInfo(
            path=path, record_count=len(records),
            categories=sorted({category for record in records for category in record.categories}),
            oldest_record=min((r.created_at for r in records), default=None),
            newest_record=max((r.created_at for r in records), default=None),
            child_scopes=self._children(path, records),
        )

    @staticmethod
    def _children(parent: str, records: list[MemoryRecord]) -> list[str]:
        depth = len(parent.strip("/").split("/")) if parent != "/" else 0
        children = {"/" + "/".join(r.scope.strip("/").split("/")[: depth + 1])
                    for r in records if r.scope != parent}
        return sorted(children)

    def list_scopes(self, parent: str = "/") -> list[str]:
        path = _scope_path(parent)
        return self._children(path, list(self._records(path)))

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        counts: dict[str, int] = {}
        for record in self._records(scope_prefix):
            for category in record.categories:
                counts[category] = counts.get(category, 0) + 1
        return counts

    def count(self, scope_prefix: str | None = None) -> int:
        if _scope_path(scope_prefix) == "/":
            return self._conn.run(ops.list_memories(**self._list_params(limit=1))).total or 0
        return sum(1 for _ in self._records(scope_prefix))

    def reset(self, scope_prefix: str | None = None) -> None:
        """Erases the crew's memories under `scope_prefix`; all of them
        (following lineage, as forgetting a user does) without one."""
        if _scope_path(scope_prefix) == "/":
            self._conn.run(ops.delete_user_memories(user_id=self.user_id))
        else:
            self.delete(scope_prefix=scope_prefix)

    async def asave(self, records: list[MemoryRecord]) -> None:
        await asyncio.to_thread(self.save, records)

    async def asearch(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        page = await self._conn.arun(self._search_call(query_embedding, limit, scope_prefix,
                                                       bool(categories or metadata_filter)))
        return self._matches(page, scope_prefix, limit, min_score, categories, metadata_filter)

    async def adelete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        return await asyncio.to_thread(self.delete, scope_prefix, categories, record_ids, older_than, metadata_filter)


def crewai_memory(config: Any, *, crew: str = "crew", user_id: str | None = None, **memory_fields: Any) -> Memory:
    """A crewai `Memory` on the service: `Crew(memory=...)` or `Agent(memory=...)`.
    Its root scope is crewai's own for a crew (`/crew/<name>`); `memory_fields`
    are `Memory`'s (`llm`, `recency_weight`, `read_only` ...)."""
    name = sanitize_scope_name(crew)
    root_scope = f"/crew/{name}"
    storage = MemoryCrewAIStorage(config, user_id=user_id or f"crew:{name}")
    return Memory(storage=storage, embedder=storage.embedder, root_scope=root_scope, **memory_fields)
