"""Dense vectors of recall entries: computed by the pipeline, read by ranking.

Vectors are written by `recall_embed_pending` (a Celery task runs it after
extraction and after memory writes), never on a request's path. An entry
rebuilt after an edit starts without a vector and is embedded again; an entry
deleted (a deleted memory or message, an erased text) takes its vector with it.

A query's nearest entries are found per scope, one of two ways
(`RECALL_VECTOR_INDEX`: `process`, `database`, or `auto`, where a scope is
held in process when its vectors fit `RECALL_VECTOR_CACHE_MIB` and searched
in the database otherwise):

- In PostgreSQL with pgvector (see `pgvector`): one statement, HNSW. Before
  pgvector 0.8 an HNSW scan cannot go past its candidate list, so the
  workspace and scope filter thins it: a scope that is a small share of the
  table is searched exactly (measured: 525 ms at 100,000 vectors, where the
  process takes 3 ms; bench/README.md). `auto` keeps those in process.
- In process: each *scope's* vectors are held once per process (the global
  scope once, whichever conversations ask), in a float32 matrix scored with
  one matrix-vector product and cut by partial selection. The scopes' running
  totals (`stats`, read with BM25's statistics in the same statement) say
  whether a cached scope is current: new vectors are appended (read by id
  past the newest cached one); only a removal makes the process re-read the
  scope's ids (never its vectors) to drop what went. All scopes together stay
  under `RECALL_VECTOR_CACHE_MIB`, the least recently used leaving first; a
  scope larger than that alone is not held and ranks by BM25 alone.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count

import memories.recall.embeddings as embeddings
import memories.recall.pgvector as pgvector
from conversations.selectors.messages import message_rows
from memories.llm.tokens import content_text
from memories.models import MemoryItem
from memories.recall.models import RecallEntry, RecallKind
from memories.recall.stats import ScopeState, scope_states

logger = logging.getLogger(__name__)

# Entries embedded per database round trip by the pipeline: one model batch's
# worth several times over, so a write transaction stays short.
EMBED_CHUNK = 128
# Neighbours by meaning handed to fusion: at most this many, and only those
# within settings.RECALL_DENSE_MARGIN of the best cosine, read on each
# entry's script scale (`script_shift`): those within the margin and the
# spread of the scales this query sees (`script_spread`) are handed over,
# and ranking keeps the ones within the margin once it knows their scripts.
DENSE_TOP_K = 200
# Vectors read per statement when a scope is loaded or extended.
READ_CHUNK = 20000


@dataclass
class _ScopeVectors:
    """One scope's vectors: rows [0, size) of `matrix` (unit length) and
    `ids`, with spare capacity so that appends are amortised."""

    ids: np.ndarray
    matrix: np.ndarray
    size: int
    embedded: int  # the scope's totals when last brought up to date
    removed: int
    max_id: int

    @property
    def nbytes(self) -> int:
        return int(self.ids.nbytes + self.matrix.nbytes)

    def append(self, ids: np.ndarray, matrix: np.ndarray) -> None:
        if not len(ids):
            return
        needed = self.size + len(ids)
        if needed > len(self.ids):
            capacity = max(needed, int(len(self.ids) * 1.25) + 64)
            grown_ids = np.empty(capacity, dtype=np.int64)
            grown = np.empty((capacity, self.matrix.shape[1]), dtype=np.float32)
            grown_ids[:self.size] = self.ids[:self.size]
            grown[:self.size] = self.matrix[:self.size]
            self.ids, self.matrix = grown_ids, grown
        self.ids[self.size:needed] = ids
        self.matrix[self.size:needed] = matrix
        self.size = needed
        self.max_id = max(self.max_id, int(ids.max()))

    def keep(self, present: np.ndarray) -> None:
        """Drop the rows whose id is not in `present` (into new arrays: a
        thread scoring the old ones keeps them whole)."""
        mask = np.isin(self.ids[:self.size], present)
        kept = int(mask.sum())
        if kept == self.size:
            return
        ids, matrix = self.ids[:self.size][mask], self.matrix[:self.size][mask]
        self.ids, self.matrix = ids, matrix
        self.size = kept

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The held rows. The size is read first: an append writes its rows
        (into new arrays when it grows them) before it moves the size."""
        size = self.size
        return self.ids[:size], self.matrix[:size]


_cache: OrderedDict[tuple[str, str, str], _ScopeVectors] = OrderedDict()
_cache_lock = threading.Lock()
# One loader per scope at a time: two threads of a worker asking for the same
# cold scope must not read (and hold) its vectors twice.
_scope_locks: dict[tuple[str, str, str], threading.Lock] = {}
_too_large: set[tuple[str, str, str]] = set()


def _limit_bytes() -> int:
    return int(settings.RECALL_VECTOR_CACHE_MIB) * 1024 * 1024


def too_large_to_hold(state: ScopeState, dims: int) -> bool:
    """Whether a scope's vectors alone pass what a process may hold."""
    return state.embedded * (dims * 4 + 8) > _limit_bytes()


def recall_vector_cache_report() -> dict[str, int]:
    """What this process holds: scopes, vectors, bytes, the limit, and the
    scopes left out for being larger than the limit alone."""
    with _cache_lock:
        return {"scopes": len(_cache), "vectors": sum(v.size for v in _cache.values()),
                "bytes": sum(v.nbytes for v in _cache.values()), "limit_bytes": _limit_bytes(),
                "scopes_too_large": len(_too_large)}


def recall_vector_cache_clear() -> None:
    with _cache_lock:
        _cache.clear()
        _too_large.clear()


def _rows(queryset) -> tuple[np.ndarray, np.ndarray]:
    pairs = list(queryset.values_list("id", "embedding"))
    if not pairs:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
    ids = np.fromiter((pk for pk, _ in pairs), dtype=np.int64, count=len(pairs))
    dims = len(pairs[0][1]) // embeddings._STORED_DTYPE.itemsize
    # Normalised once here (float16 storage leaves rows a hair off unit
    # length), so each query is one matrix-vector product.
    return ids, embeddings.normalize_rows(embeddings.bytes_to_matrix([bytes(blob) for _, blob in pairs], dims))


def _read_after(entries, after: int) -> tuple[np.ndarray, np.ndarray]:
    """Vectors with an id past `after`, in id order, a chunk per statement."""
    id_parts, matrix_parts = [], []
    while True:
        ids, matrix = _rows(entries.filter(id__gt=after).order_by("id")[:READ_CHUNK])
        if not len(ids):
            break
        id_parts.append(ids)
        matrix_parts.append(matrix)
        after = int(ids[-1])
        if len(ids) < READ_CHUNK:
            break
    if not id_parts:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
    return np.concatenate(id_parts), np.concatenate(matrix_parts)


def _scope_vectors(workspace_id: str, token: str, model: str, dims: int, state: ScopeState
                   ) -> _ScopeVectors | None:
    key = (workspace_id, token, model)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None and cached.embedded == state.embedded and cached.removed == state.removed:
            _cache.move_to_end(key)
            return cached
        lock = _scope_locks.setdefault(key, threading.Lock())
    if too_large_to_hold(state, dims):
        with _cache_lock:
            if key not in _too_large:
                logger.warning("recall vectors of scope %s (%d) exceed RECALL_VECTOR_CACHE_MIB: ranked by BM25 "
                               "alone in process", token, state.embedded)
            _too_large.add(key)
            _cache.pop(key, None)
        return None
    with lock:
        with _cache_lock:
            cached = _cache.get(key)
        if cached is not None and cached.embedded == state.embedded and cached.removed == state.removed:
            return cached
        entries = RecallEntry.objects.filter(workspace_id=workspace_id, scope_token=token, embedding_model=model)
        if cached is None:
            cached = _ScopeVectors(ids=np.zeros(0, dtype=np.int64), matrix=np.zeros((0, dims), dtype=np.float32),
                                   size=0, embedded=-1, removed=state.removed, max_id=0)
            new_ids, new_matrix = _read_after(entries, 0)
            cached.append(new_ids, new_matrix)
        else:
            # Brought up to date in place: appends go past the rows other
            # threads are scoring, and a removal builds new arrays.
            added = max(state.embedded - cached.embedded, 0)
            if cached.removed != state.removed:
                _sync_ids(cached, entries)
            else:
                new_ids, new_matrix = _read_after(entries, cached.max_id)
                cached.append(new_ids, new_matrix)
                if len(new_ids) < added:
                    # A vector written out of id order (an older entry
                    # embedded late): found by its id.
                    _sync_ids(cached, entries)
        cached.embedded, cached.removed = state.embedded, state.removed
        with _cache_lock:
            _cache[key] = cached
            _cache.move_to_end(key)
            _too_large.discard(key)
            total = sum(v.nbytes for v in _cache.values())
            while total > _limit_bytes() and len(_cache) > 1:
                _, evicted = _cache.popitem(last=False)
                total -= evicted.nbytes
        return cached


def _sync_ids(cached: _ScopeVectors, entries) -> None:
    """Drop the vectors gone from the scope; read those it has that the cache
    lacks. Reads the scope's ids, and only the missing vectors."""
    present = np.fromiter(entries.values_list("id", flat=True).iterator(chunk_size=READ_CHUNK), dtype=np.int64)
    cached.keep(present)
    missing = np.setdiff1d(present, cached.ids[:cached.size], assume_unique=True)
    for start in range(0, len(missing), READ_CHUNK):
        ids, matrix = _rows(entries.filter(id__in=[int(x) for x in missing[start:start + READ_CHUNK]]))
        cached.append(ids, matrix)


def _top(ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The `k` best, best first: a partial selection, then a sort of only those."""
    if len(scores) > k:
        part = np.argpartition(-scores, k - 1)[:k]
        ids, scores = ids[part], scores[part]
    order = np.argsort(-scores, kind="stable")
    return ids[order], scores[order]


# Query vectors computed beside the request's SQL (`DenseRecall.begin`). The
# model runs in C without the GIL (or waits on a network provider), so the
# vector and the BM25 shortlist take the time of the longer, not the sum.
_query_vectors = ThreadPoolExecutor(max_workers=4, thread_name_prefix="query-vector")


class DenseRecall:
    """Called as `(scope_tokens, query, states=None) -> {entry id: cosine}`:
    the nearest entries of the scopes. `states` are the scopes' totals when
    the caller has read them (ranking reads them with BM25's statistics).
    `begin(query, states)` starts the query's vector in a thread while the
    caller reads the database; the call waits for it."""

    def __init__(self, workspace_id: str, provider: embeddings.EmbeddingProvider):
        self.workspace_id = workspace_id
        self.provider = provider
        self._early: tuple[str, Future] | None = None

    @staticmethod
    def _embedded(scope_tokens: Sequence[str], states: Mapping[str, ScopeState]) -> list[str]:
        return [t for t in scope_tokens if t in states and states[t].embedded > 0]

    def begin(self, scope_tokens: Sequence[str], query: str, states: Mapping[str, ScopeState]) -> None:
        if query.strip() and self._embedded(scope_tokens, states):
            self._early = (query, _query_vectors.submit(self.provider.embed_query, query))

    def _query_vector(self, query: str) -> np.ndarray:
        if self._early is not None and self._early[0] == query:
            return self._early[1].result()
        return self.provider.embed_query(query)

    def __call__(self, scope_tokens: Sequence[str], query: str,
                 states: Mapping[str, ScopeState] | None = None, *, query_cjk: float = 0.0
                 ) -> dict[int, float]:
        """{entry id: cosine} of the query's nearest neighbours; `query_cjk`:
        the query terms' share of ideographs (`analysis.cjk_share`), which
        ranking passes."""
        provider, workspace_id = self.provider, self.workspace_id
        if states is None:
            states = scope_states(workspace_id=workspace_id, scope_tokens=scope_tokens)
        tokens = self._embedded(scope_tokens, states)
        if not tokens:
            return {}
        try:
            vector = np.asarray(self._query_vector(query), dtype=np.float32)
        except embeddings.EmbeddingError as exc:
            # Recall still works on BM25 alone; the provider's outage is logged.
            logger.warning("query embedding failed, ranking by BM25 alone: %s", exc)
            return {}
        norm = float(np.linalg.norm(vector))
        if not norm:
            return {}
        vector = vector / norm
        in_database = _searched_in_database(tokens, states, provider.dims)
        id_parts, score_parts = [], []
        if in_database:
            ids, scores = pgvector.nearest(workspace_id=workspace_id, scope_tokens=in_database, model=provider.name,
                                           query=vector, limit=DENSE_TOP_K)
            id_parts.append(ids)
            score_parts.append(scores)
        for token in tokens:
            if token in in_database:
                continue
            held = _scope_vectors(workspace_id, token, provider.name, provider.dims, states[token])
            if held is None or not held.size:
                continue
            held_ids, held_matrix = held.rows()
            scope_ids, scope_scores = _top(held_ids, held_matrix @ vector, DENSE_TOP_K)
            id_parts.append(scope_ids)
            score_parts.append(scope_scores)
        if not id_parts:
            return {}
        ids, scores = _top(np.concatenate(id_parts), np.concatenate(score_parts), DENSE_TOP_K)
        if not len(ids):
            return {}
        # Every text has some cosine with every query (e5's unrelated pairs sit
        # around 0.7-0.8): only the near neighbours of the best match count as
        # relevant by meaning, so an unrelated memory is not let in.
        floor = float(scores[0]) - settings.RECALL_DENSE_MARGIN - script_spread(query_cjk)
        return {int(i): float(v) for i, v in zip(ids, scores, strict=True) if v > 0 and v >= floor}


def script_shift(query_cjk: float, entry_cjk: float) -> float:
    """How far the model's cosines for a query and an entry whose terms are
    these shares ideographic sit from a Latin-script pair's:
    `settings.RECALL_COSINE_SCRIPT_SHIFT`'s pairs weighed by each side's share
    of each script ("User prefers 饺子 for dinner" is a quarter Chinese)."""
    if not query_cjk and not entry_cjk:
        return 0.0
    shifts = settings.RECALL_COSINE_SCRIPT_SHIFT
    return sum(q_share * e_share * shifts.get(f"{q_script}>{e_script}", 0.0)
               for q_script, q_share in (("latin", 1 - query_cjk), ("cjk", query_cjk))
               for e_script, e_share in (("latin", 1 - entry_cjk), ("cjk", entry_cjk)))


def script_spread(query_cjk: float) -> float:
    """How far apart the scales of two entries can lie for this query: a
    Latin and a CJK entry's (one of mixed script lies between)."""
    return abs(script_shift(query_cjk, 1.0) - script_shift(query_cjk, 0.0))


def _searched_in_database(tokens: Sequence[str], states: Mapping[str, ScopeState], dims: int) -> list[str]:
    """The scopes whose nearest vectors pgvector finds (see the module's
    docstring); the others are held in process."""
    mode = settings.RECALL_VECTOR_INDEX
    if mode == "process" or not pgvector.has_column():
        return []
    if mode == "database":
        return list(tokens)
    return [token for token in tokens if too_large_to_hold(states[token], dims)]


def dense_similarities(*, workspace_id: str) -> DenseRecall | None:
    """The workspace's dense recall, or None when no embedding provider is
    configured."""
    provider = embeddings.get_embedding_provider()
    return DenseRecall(workspace_id, provider) if provider is not None else None


def _entry_texts(entries: list[RecallEntry]) -> list[str]:

    memories = dict(MemoryItem.objects.filter(pk__in=[e.memory_id for e in entries if e.memory_id])
                    .values_list("pk", "content"))
    messages = message_rows(workspace_id=entries[0].workspace_id,
                            message_ids=[e.message_id for e in entries if e.kind == RecallKind.PASSAGE])
    texts = []
    for entry in entries:
        if entry.kind == RecallKind.MEMORY:
            texts.append(memories.get(entry.memory_id, ""))
        else:
            message = messages.get(entry.message_id)
            texts.append(content_text(message["content"])[entry.start_char:entry.end_char] if message else "")
    return texts


def recall_embed_pending(*, workspace_id: str, limit: int = 2000) -> int:
    """Embed up to `limit` entries of the workspace that have no vector of the
    current provider's model. Returns how many were embedded. The model runs
    outside any transaction; each chunk is written in a short one, and only to
    entries still there with the text that was read (an entry rebuilt
    meanwhile is a new row and waits for the next run)."""
    provider = embeddings.get_embedding_provider()
    if provider is None:
        return 0
    done = 0
    while done < limit:
        entries = list(RecallEntry.objects.filter(workspace_id=workspace_id).exclude(embedding_model=provider.name)
                       .order_by("id").only("id", "workspace_id", "kind", "memory_id", "message_id",
                                             "start_char", "end_char")[:EMBED_CHUNK])
        if not entries:
            break
        vectors = provider.embed_documents(_entry_texts(entries))
        with transaction.atomic():
            recall_vectors_store([(entry.pk, vector) for entry, vector in zip(entries, vectors, strict=True)],
                                 model=provider.name)
        done += len(entries)
    return done


def recall_vectors_store(pairs: Sequence[tuple[int, np.ndarray]], *, model: str) -> None:
    """Write each entry's vector (and, with pgvector, its `vector` column)."""
    if pgvector.has_column():
        pgvector.vectors_write(pairs, model=model)
        return
    for pk, vector in pairs:
        RecallEntry.objects.filter(pk=pk).update(embedding=embeddings.vector_to_bytes(vector), embedding_model=model)


def recall_entries_without_vector(*, workspace_id: str | None = None) -> dict[str, int]:
    """{workspace id: entries without a vector of the current model}, for the
    workspaces that have any (one grouped query); empty while embeddings are off."""
    provider = embeddings.get_embedding_provider()
    if provider is None:
        return {}
    entries = RecallEntry.objects.exclude(embedding_model=provider.name)
    if workspace_id is not None:
        entries = entries.filter(workspace_id=workspace_id)
    return dict(entries.order_by().values_list("workspace_id").annotate(n=Count("id")))


def recall_embeddings_clear(*, entry_ids: Sequence[int]) -> None:
    if pgvector.has_column():
        pgvector.vectors_clear(list(entry_ids))
        return
    RecallEntry.objects.filter(pk__in=list(entry_ids)).update(embedding=None, embedding_model="")
