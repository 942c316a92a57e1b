"""Dense vectors of recall entries: computed by the pipeline, read by ranking.

Vectors are written by `recall_embed_pending` (a Celery task runs it after
extraction and after memory writes), never on a request's path. An entry
rebuilt after an edit starts without a vector and is embedded again; an entry
deleted (a deleted memory or message, an erased text) takes its vector with it.

Ranking compares the query's vector with every embedded entry of the visible
scopes. The scopes' matrix is cached per process and keyed by a fingerprint
(entry count and newest id, one aggregate query), so a query reads the
vectors again only after the scopes changed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np
from django.db import transaction
from django.db.models import Count, Max

from memories.llm.tokens import content_text
from memories.models import MemoryItem, RecallEntry, RecallKind
from memories.recall import embeddings

logger = logging.getLogger(__name__)

# Entries embedded per database round trip by the pipeline: one model batch's
# worth several times over, so a write transaction stays short.
EMBED_CHUNK = 128
# Scope matrices kept per process: a worker serves a few hot conversations.
MATRIX_CACHE_SIZE = 16
# Neighbours by meaning handed to fusion: at most this many, and only those
# within DENSE_MARGIN of the best cosine.
DENSE_TOP_K = 200
DENSE_MARGIN = 0.08

# A cached matrix is trusted this long before its fingerprint is checked again.
FINGERPRINT_TTL_SECONDS = 5.0

_cache: OrderedDict[tuple, tuple[tuple, np.ndarray, np.ndarray, float]] = OrderedDict()
_cache_lock = threading.Lock()


def _scope_matrix(workspace_id: str, scope_tokens: Sequence[str], model: str, dims: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    rows = RecallEntry.objects.filter(workspace_id=workspace_id, scope_token__in=list(scope_tokens),
                                      embedding_model=model)
    key = (workspace_id, tuple(sorted(scope_tokens)), model)
    now = time.monotonic()
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None and now - cached[3] < FINGERPRINT_TTL_SECONDS:
            # Vectors arrive from the pipeline seconds after their text; a
            # matrix this fresh is taken without asking the database.
            _cache.move_to_end(key)
            return cached[1], cached[2]
    fingerprint = tuple(rows.aggregate(n=Count("id"), top=Max("id")).values())
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None and cached[0] == fingerprint:
            _cache[key] = (*cached[:3], now)
            _cache.move_to_end(key)
            return cached[1], cached[2]
    pairs = list(rows.values_list("id", "embedding"))
    ids = np.array([pk for pk, _ in pairs], dtype=np.int64)
    # Normalised once here (float16 storage leaves rows a hair off unit
    # length), so each query is one matrix-vector product.
    matrix = embeddings.normalize_rows(embeddings.bytes_to_matrix([bytes(blob) for _, blob in pairs], dims)) \
        if pairs else np.zeros((0, dims), dtype=np.float32)
    with _cache_lock:
        _cache[key] = (fingerprint, ids, matrix, now)
        _cache.move_to_end(key)
        while len(_cache) > MATRIX_CACHE_SIZE:
            _cache.popitem(last=False)
    return ids, matrix


def dense_similarities(*, workspace_id: str) -> Callable[[Sequence[str], str], dict[int, float]] | None:
    """A function `(scope_tokens, query) -> {entry id: cosine}` for the
    nearest entries, or None when no embedding provider is configured."""
    provider = embeddings.get_embedding_provider()
    if provider is None:
        return None

    def similarities(scope_tokens: Sequence[str], query: str) -> dict[int, float]:
        ids, matrix = _scope_matrix(workspace_id, scope_tokens, provider.name, provider.dims)
        if not len(ids):
            return {}
        try:
            vector = provider.embed_query(query)
        except embeddings.EmbeddingError as exc:
            # Recall still works on BM25 alone; the provider's outage is logged.
            logger.warning("query embedding failed, ranking by BM25 alone: %s", exc)
            return {}
        norm = float(np.linalg.norm(vector))
        if not norm:
            return {}
        scores = matrix @ (np.asarray(vector, dtype=np.float32) / norm)
        top = np.argsort(-scores)[:DENSE_TOP_K]
        # Every text has some cosine with every query (e5's unrelated pairs sit
        # around 0.7-0.8): only the near neighbours of the best match count as
        # relevant by meaning, so an unrelated memory is not let in.
        floor = float(scores[top[0]]) - DENSE_MARGIN
        return {int(ids[i]): float(scores[i]) for i in top if scores[i] > 0 and scores[i] >= floor}

    return similarities


def _entry_texts(entries: list[RecallEntry]) -> list[str]:
    from conversations.selectors import message_rows

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
            for entry, vector in zip(entries, vectors, strict=True):
                RecallEntry.objects.filter(pk=entry.pk).update(
                    embedding=embeddings.vector_to_bytes(vector), embedding_model=provider.name)
        done += len(entries)
    return done


def recall_embeddings_clear(*, entry_ids: Sequence[int]) -> None:
    RecallEntry.objects.filter(pk__in=list(entry_ids)).update(embedding=None, embedding_model="")
