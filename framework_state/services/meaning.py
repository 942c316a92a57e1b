"""Search by meaning for the LangGraph store's documents, with the embedding
model recall ranks by (`EMBEDDING_PROVIDER`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from memories.recall.embeddings import get_embedding_provider

# Document vectors kept per process, by (model, content hash): a document is
# embedded once, not at every search that reaches it.
MAX_CACHED_VECTORS = 50_000

_vectors: OrderedDict[tuple[str, str], Any] = OrderedDict()
_vectors_lock = threading.Lock()


def meaning_scores(query: str, documents: Sequence[tuple[str, str]]) -> list[float] | None:
    """The cosine similarity of each `(content_sha256, text)` to the query,
    or None when recall's embedding model is off."""
    provider = get_embedding_provider()
    if provider is None:
        return None
    keys = [(provider.name, sha) for sha, _ in documents]
    with _vectors_lock:
        missing = {key: text for key, (_, text) in zip(keys, documents, strict=True) if key not in _vectors}
    if missing:
        # Outside the lock: a model call; two searches may embed the same text, never wrongly.
        rows = provider.embed_documents(list(missing.values()))
        with _vectors_lock:
            for key, row in zip(missing, rows, strict=True):
                _vectors[key] = row
            while len(_vectors) > MAX_CACHED_VECTORS:
                _vectors.popitem(last=False)
    query_vector = provider.embed_query(query)
    with _vectors_lock:
        vectors = [_vectors.get(key) for key in keys]
    # A vector evicted meanwhile by other searches counts as unrelated this time.
    return [round(float(vector @ query_vector), 6) if vector is not None else 0.0 for vector in vectors]
