"""Optional semantic similarity for context assembly, through an
OpenAI-compatible embeddings endpoint (`EMBEDDING_PROVIDER=openai`,
`EMBEDDING_MODEL`; base URL and key from `LLM_BASE_URL` / `LLM_API_KEY`).

Memories are embedded on demand and cached in-process by content hash: the
service keeps no vector column, so only the most relevant candidates by full
text (and the most important) are embedded per request.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from django.conf import settings

# Embeddings per request: a bounded cost whatever the scope's size.
MAX_EMBEDDED_CANDIDATES = 64
_CACHE: dict[str, list[float]] = {}
_CACHE_MAX = 20_000


class OpenAIEmbedder:
    def __init__(self, *, model: str, api_key: str = "", base_url: str | None = None, http_client: Any = None) -> None:
        import openai

        self.model = model
        self.client = openai.OpenAI(api_key=api_key or "not-needed", base_url=base_url or None,
                                    max_retries=2, timeout=settings.LLM_TIMEOUT_SECONDS, http_client=http_client)

    def embed(self, texts: list[str]) -> list[list[float]]:
        response = self.client.embeddings.create(model=self.model, input=texts)
        return [row.embedding for row in response.data]

    def similarities(self, *, workspace, query: str) -> dict[str, float]:
        from memories.models import LifecycleStatus, MemoryItem, Status

        rows = list(MemoryItem.objects.filter(workspace=workspace, status=Status.ACTIVE,
                                              lifecycle_status=LifecycleStatus.ACTIVE)
                    .exclude(type="document").order_by("-importance", "-created_at")
                    .values_list("pk", "content", "content_sha256")[:MAX_EMBEDDED_CANDIDATES])
        missing = [(sha, content) for _, content, sha in rows if sha not in _CACHE]
        if missing:
            vectors = self.embed([content for _, content in missing])
            if len(_CACHE) > _CACHE_MAX:
                _CACHE.clear()
            for (sha, _), vector in zip(missing, vectors, strict=True):
                _CACHE[sha] = vector
        query_vector = self.embed([query])[0]
        return {pk: max(0.0, _cosine(query_vector, _CACHE[sha])) for pk, _, sha in rows}


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


@lru_cache(maxsize=1)
def _openai_embedder(model: str, api_key: str, base_url: str) -> OpenAIEmbedder:
    return OpenAIEmbedder(model=model, api_key=api_key, base_url=base_url or None)


def get_embedder() -> OpenAIEmbedder | None:
    if (settings.EMBEDDING_PROVIDER or "").lower() != "openai" or not settings.EMBEDDING_MODEL:
        return None
    return _openai_embedder(settings.EMBEDDING_MODEL, settings.LLM_API_KEY, settings.LLM_BASE_URL)
