"""Embedding providers: the offline model shipped in its package (real
vectors, English, Chinese and across the two), the stored byte form, and the
OpenAI-compatible provider against a real HTTP server on the loopback that
speaks the embeddings API."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from memories.recall import embeddings
from memories.recall.embeddings import (
    MAX_TEXT_CHARS,
    REMOTE_BATCH_SIZE,
    EmbeddingError,
    EmbeddingTransientError,
    OfflineEmbeddingProvider,
    OpenAIEmbeddingProvider,
    bytes_to_matrix,
    bytes_to_vector,
    cosine_scores,
    get_embedding_provider,
    vector_to_bytes,
)

# --- The offline model ------------------------------------------------------------

DOCS_EN = [
    "My sister Anna is allergic to peanuts, so we never cook with them.",
    "I adopted a golden retriever puppy named Max last month.",
    "The quarterly tax filing is due on April 15th.",
]
DOCS_ZH = [
    "我妹妹对花生过敏，所以我们做饭从不用花生。",
    "我上个月领养了一只叫Max的金毛小狗。",
    "季度报税的截止日期是4月15日。",
]
# (query, index of the document it is about)
QUERIES_EN = [("Does anyone in the family have a food allergy?", 0), ("What pet did they get?", 1),
              ("When is the tax deadline?", 2)]
QUERIES_ZH = [("谁对食物过敏？", 0), ("他们养了什么宠物？", 1), ("报税什么时候截止？", 2)]


@pytest.fixture(scope="module")
def offline() -> OfflineEmbeddingProvider:
    return OfflineEmbeddingProvider()


def _best(provider, query: str, docs: list[str]) -> int:
    return int(np.argmax(cosine_scores(provider.embed_query(query), provider.embed_documents(docs))))


def test_offline_vectors_are_normalised_rows_of_the_declared_dims(offline):
    matrix = offline.embed_documents(DOCS_EN + DOCS_ZH)
    assert offline.dims == 384
    assert "384" in offline.name and "e5-small" in offline.name
    assert matrix.shape == (6, 384) and matrix.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    query = offline.embed_query("food allergy")
    assert query.shape == (384,) and query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5


def test_offline_vectors_are_deterministic_and_batch_independent(offline):
    together = offline.embed_documents(DOCS_EN)
    alone = np.vstack([offline.embed_documents([doc]) for doc in DOCS_EN])
    np.testing.assert_allclose(together, alone, atol=1e-4)
    np.testing.assert_array_equal(offline.embed_documents(DOCS_EN), together)


@pytest.mark.parametrize(("query", "expected"), QUERIES_EN)
def test_offline_english_query_finds_the_related_english_text(offline, query, expected):
    assert _best(offline, query, DOCS_EN) == expected


@pytest.mark.parametrize(("query", "expected"), QUERIES_ZH)
def test_offline_chinese_query_finds_the_related_chinese_text(offline, query, expected):
    assert _best(offline, query, DOCS_ZH) == expected


@pytest.mark.parametrize(("query", "expected"), QUERIES_EN)
def test_offline_english_query_finds_the_related_chinese_text(offline, query, expected):
    assert _best(offline, query, DOCS_ZH) == expected


@pytest.mark.parametrize(("query", "expected"), QUERIES_ZH)
def test_offline_chinese_query_finds_the_related_english_text(offline, query, expected):
    assert _best(offline, query, DOCS_EN) == expected


def test_offline_translation_pairs_are_closer_than_unrelated_texts(offline):
    english = offline.embed_documents(DOCS_EN)
    chinese = offline.embed_documents(DOCS_ZH)
    similarity = english @ chinese.T
    for i in range(3):
        others = [similarity[i, j] for j in range(3) if j != i]
        assert similarity[i, i] > max(others) + 0.03


def test_empty_texts_get_zero_rows_and_score_zero(offline):
    matrix = offline.embed_documents(["", "   ", DOCS_EN[0]])
    assert not matrix[0].any() and not matrix[1].any()
    np.testing.assert_allclose(matrix[2], offline.embed_documents([DOCS_EN[0]])[0], atol=1e-4)
    scores = cosine_scores(offline.embed_query("peanut allergy"), matrix)
    assert scores[0] == 0.0 and scores[1] == 0.0 and scores[2] > 0.5
    assert offline.embed_documents([]).shape == (0, 384)


def test_long_texts_are_clipped_to_a_bounded_cost(offline, monkeypatch):
    assert MAX_TEXT_CHARS >= 1000
    monkeypatch.setattr(embeddings, "MAX_TEXT_CHARS", 120)  # the same rule, a cheaper test
    head = "The meeting with the architect moved to Thursday. " * 3
    long_text = head[:120] + " Completely unrelated tail about volcanoes." * 500
    head_vector = offline.embed_documents([head[:120]])
    np.testing.assert_allclose(offline.embed_documents([long_text]), head_vector, atol=1e-5)
    monkeypatch.setattr(embeddings, "MAX_TEXT_CHARS", 400)
    assert float(cosine_scores(head_vector[0], offline.embed_documents([long_text]))[0]) < 0.99  # the tail counts


def test_non_string_input_is_refused(offline):
    with pytest.raises(TypeError):
        offline.embed_documents("one string, not a list")
    with pytest.raises(TypeError):
        offline.embed_documents(["fine", 42])


def test_offline_model_loads_once_and_serves_threads_concurrently(offline):
    expected = offline.embed_documents(DOCS_EN + DOCS_ZH)
    engine = embeddings._load_engine()
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: OfflineEmbeddingProvider().embed_documents(DOCS_EN + DOCS_ZH), range(4)))
    for result in results:
        np.testing.assert_allclose(result, expected, atol=1e-4)
    assert embeddings._load_engine() is engine


@pytest.mark.slow
def test_offline_engine_threads_follow_the_setting_and_wait_passively():
    # In a fresh interpreter: OpenMP reads its settings once, when the engine loads.
    script = (
        "import os, re, django; django.setup()\n"
        "from memories.recall.embeddings import OfflineEmbeddingProvider\n"
        "def threads(): return int(re.search(r'Threads:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
        "before = threads()\n"
        "OfflineEmbeddingProvider().embed_documents(['one text', 'two texts'])\n"
        "print(os.environ['OMP_NUM_THREADS'], os.environ['OMP_WAIT_POLICY'], threads() - before)\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memory_project.settings", "EMBEDDING_THREADS": "1"}
    env.pop("OMP_NUM_THREADS", None)
    env.pop("OMP_WAIT_POLICY", None)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.stdout.split() == ["1", "PASSIVE", "0"]  # no thread pool started


# --- Bytes and scoring ------------------------------------------------------------

def test_vector_byte_round_trip_is_float16_and_keeps_the_ranking(offline):
    matrix = offline.embed_documents(DOCS_EN + DOCS_ZH)
    blobs = [vector_to_bytes(row) for row in matrix]
    assert all(len(blob) == 384 * 2 for blob in blobs)
    restored = bytes_to_matrix(blobs, 384)
    assert restored.dtype == np.float32 and restored.shape == matrix.shape
    assert np.abs(restored - matrix).max() < 1e-3
    np.testing.assert_array_equal(bytes_to_vector(blobs[0], 384), restored[0])
    query = offline.embed_query("Who is allergic to peanuts?")
    exact, stored = cosine_scores(query, matrix), cosine_scores(query, restored)
    assert np.abs(exact - stored).max() < 1e-3
    assert list(np.argsort(-exact)) == list(np.argsort(-stored))


@pytest.mark.parametrize("blob", [b"", b"\x00\x01\x02"])
def test_bytes_that_are_not_a_vector_are_refused(blob):
    with pytest.raises(ValueError):
        bytes_to_vector(blob)


def test_stored_vectors_of_the_wrong_length_are_refused():
    blob = vector_to_bytes(np.ones(8, dtype=np.float32))
    with pytest.raises(ValueError, match="expected 16"):
        bytes_to_vector(blob, 16)
    with pytest.raises(ValueError, match="vector 1"):
        bytes_to_matrix([blob, blob[:-2]], 8)
    with pytest.raises(ValueError):
        vector_to_bytes(np.array([1.0, np.nan]))
    with pytest.raises(ValueError):
        vector_to_bytes(np.ones((2, 2)))


def test_cosine_scores_shapes_and_edges():
    matrix = np.array([[3.0, 4.0], [0.0, 0.0], [-1.0, 0.0]], dtype=np.float32)
    np.testing.assert_allclose(cosine_scores(np.array([1.0, 0.0]), matrix), [0.6, 0.0, -1.0], atol=1e-6)
    assert cosine_scores(np.array([1.0, 0.0]), np.zeros((0, 2))).shape == (0,)
    assert not cosine_scores(np.zeros(2), matrix).any()
    with pytest.raises(ValueError):
        cosine_scores(np.ones(3), matrix)


# --- An OpenAI-compatible endpoint: a real HTTP server on the loopback ---------------

FAKE_DIMS = 12


def fake_vector(text: str, dims: int = FAKE_DIMS) -> list[float]:
    """Deterministic, unnormalised: the server does not promise unit length."""
    digest = hashlib.sha256(text.encode()).digest()
    return [(digest[i % len(digest)] - 127.5) / 10 for i in range(dims)]


class FakeEmbeddingsServer:
    """Speaks `POST /v1/embeddings`; `failures` is a queue of status codes
    (or "sleep") answered before the normal reply; every request is kept."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.failures: list[int | str] = []
        self.shuffle = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                if server.failures:
                    failure = server.failures.pop(0)
                    if failure == "sleep":
                        time.sleep(1.0)
                    else:
                        return self._reply(failure, {"error": {"message": f"failure {failure}", "type": "x"}})
                if self.path != "/v1/embeddings":
                    return self._reply(404, {"error": {"message": "no route", "type": "x"}})
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                dims = body.get("dimensions") or FAKE_DIMS
                data = [{"object": "embedding", "index": i, "embedding": fake_vector(text, dims)}
                        for i, text in enumerate(inputs)]
                if server.shuffle:
                    data.reverse()
                self._reply(200, {"object": "list", "model": body["model"], "data": data,
                                  "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}})

            def _reply(self, status, payload):
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def fake_server():
    with FakeEmbeddingsServer() as server:
        yield server


def _remote(server: FakeEmbeddingsServer, **kwargs) -> OpenAIEmbeddingProvider:
    provider = OpenAIEmbeddingProvider(**{"model": "embed-small", "api_key": "sk-test", "base_url": server.base_url,
                                          "timeout": 5.0, "max_retries": 3, **kwargs})
    provider.sleep = lambda seconds: None
    return provider


def _normalised(vector: list[float]) -> np.ndarray:
    v = np.array(vector, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_openai_provider_embeds_through_the_endpoint(fake_server):
    provider = _remote(fake_server)
    texts = ["first text", "", "第二段文字"]
    matrix = provider.embed_documents(texts)
    assert matrix.shape == (3, FAKE_DIMS) and matrix.dtype == np.float32
    np.testing.assert_allclose(matrix[0], _normalised(fake_vector("first text")), atol=1e-6)
    np.testing.assert_allclose(matrix[2], _normalised(fake_vector("第二段文字")), atol=1e-6)
    assert not matrix[1].any()  # the empty text never reached the server
    (request,) = fake_server.requests
    assert request["path"] == "/v1/embeddings" and request["auth"] == "Bearer sk-test"
    assert request["body"]["model"] == "embed-small" and request["body"]["input"] == ["first text", "第二段文字"]
    assert request["body"]["encoding_format"] == "float" and "dimensions" not in request["body"]
    assert provider.dims == FAKE_DIMS and provider.name == f"openai/embed-small/{FAKE_DIMS}"
    query = provider.embed_query("first text")
    assert float(cosine_scores(query, matrix)[0]) == pytest.approx(1.0, abs=1e-6)


def test_openai_provider_orders_rows_by_index_and_batches(fake_server):
    fake_server.shuffle = True
    provider = _remote(fake_server)
    texts = [f"text number {i}" for i in range(REMOTE_BATCH_SIZE + 6)]
    matrix = provider.embed_documents(texts)
    expected = np.vstack([_normalised(fake_vector(text)) for text in texts])
    np.testing.assert_allclose(matrix, expected, atol=1e-6)
    assert [len(r["body"]["input"]) for r in fake_server.requests] == [REMOTE_BATCH_SIZE, 6]


def test_openai_provider_learns_dims_with_one_request_or_asks_for_them(fake_server):
    provider = _remote(fake_server)
    assert provider.name == f"openai/embed-small/{FAKE_DIMS}"
    assert len(fake_server.requests) == 1
    assert provider.dims == FAKE_DIMS and len(fake_server.requests) == 1

    sized = _remote(fake_server, dimensions=8)
    assert sized.dims == 8 and len(fake_server.requests) == 1  # declared, not probed
    assert sized.embed_documents(["a"]).shape == (1, 8)
    assert fake_server.requests[-1]["body"]["dimensions"] == 8


def test_openai_provider_retries_transient_failures(fake_server):
    fake_server.failures = [429, 503]
    provider = _remote(fake_server)
    matrix = provider.embed_documents(["retry me"])
    np.testing.assert_allclose(matrix[0], _normalised(fake_vector("retry me")), atol=1e-6)
    assert len(fake_server.requests) == 3


def test_openai_provider_gives_up_after_its_retries(fake_server):
    fake_server.failures = [500] * 10
    provider = _remote(fake_server, max_retries=2)
    with pytest.raises(EmbeddingTransientError, match="3 attempts"):
        provider.embed_documents(["never"])
    assert len(fake_server.requests) == 3


def test_openai_provider_times_out_and_retries(fake_server):
    fake_server.failures = ["sleep", "sleep"]
    provider = _remote(fake_server, timeout=0.2, max_retries=1)
    with pytest.raises(EmbeddingTransientError):
        provider.embed_documents(["slow"])
    assert len(fake_server.requests) == 2


def test_openai_provider_does_not_retry_a_permanent_failure(fake_server):
    fake_server.failures = [401]
    provider = _remote(fake_server)
    with pytest.raises(EmbeddingError, match="HTTP 401") as caught:
        provider.embed_documents(["no key"])
    assert not isinstance(caught.value, EmbeddingTransientError)
    assert len(fake_server.requests) == 1


def test_openai_provider_refuses_vectors_of_a_changed_length(fake_server):
    provider = _remote(fake_server, dimensions=8)
    provider.requested_dims = 0  # the server now answers with its own length
    with pytest.raises(EmbeddingError, match="expected 8"):
        provider.embed_documents(["x"])


def test_query_vectors_are_remembered_and_read_only(fake_server, monkeypatch):
    monkeypatch.setattr(embeddings, "QUERY_CACHE_SIZE", 8)
    provider = _remote(fake_server)
    first = provider.embed_query("  where is the cat?  ")
    again = provider.embed_query("where is the cat?")
    assert again is first and len(fake_server.requests) == 1
    with pytest.raises(ValueError):
        first[0] = 1.0
    for i in range(embeddings.QUERY_CACHE_SIZE):
        provider.embed_query(f"query {i}")
    assert len(provider._query_cache) == embeddings.QUERY_CACHE_SIZE
    requests = len(fake_server.requests)
    provider.embed_query("where is the cat?")  # the oldest, evicted
    assert len(fake_server.requests) == requests + 1


def test_openai_provider_needs_a_model():
    with pytest.raises(EmbeddingError, match="EMBEDDING_MODEL"):
        OpenAIEmbeddingProvider(model="")


# --- Choosing the provider from settings ----------------------------------------------

def test_offline_is_the_default_and_one_instance(settings):
    settings.EMBEDDING_PROVIDER = ""
    provider = get_embedding_provider()
    assert isinstance(provider, OfflineEmbeddingProvider)
    assert get_embedding_provider() is provider
    settings.EMBEDDING_PROVIDER = "offline"
    assert get_embedding_provider() is provider


def test_none_gives_no_provider(settings):
    settings.EMBEDDING_PROVIDER = "none"
    assert get_embedding_provider() is None


def test_an_unknown_provider_is_a_clear_error(settings):
    settings.EMBEDDING_PROVIDER = "word2vec"
    with pytest.raises(EmbeddingError, match="offline, openai, none"):
        get_embedding_provider()


def test_openai_from_settings_falls_back_to_the_llm_endpoint(settings, fake_server):
    settings.EMBEDDING_PROVIDER = "openai"
    settings.EMBEDDING_MODEL = "embed-small"
    settings.EMBEDDING_BASE_URL = ""
    settings.EMBEDDING_API_KEY = ""
    settings.LLM_BASE_URL = fake_server.base_url
    settings.LLM_API_KEY = "sk-llm"
    provider = get_embedding_provider()
    assert isinstance(provider, OpenAIEmbeddingProvider)
    assert provider.embed_documents(["hello"]).shape == (1, FAKE_DIMS)
    assert fake_server.requests[-1]["auth"] == "Bearer sk-llm"

    settings.EMBEDDING_BASE_URL = fake_server.base_url
    settings.EMBEDDING_API_KEY = "sk-embed"
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"  # nothing listens there
    own = get_embedding_provider()
    assert own is not provider
    own.embed_query("hello")
    assert fake_server.requests[-1]["auth"] == "Bearer sk-embed"
