"""Context assembly as a workspace grows: 1k, 10k, 100k and 1M global memories.

Starts PostgreSQL with pgvector (the `pgserver` package's server, as the tests
do; its own database `bench_scale`, deleted at the end) and seeds one
workspace per size, each with that many global memories and a 2,000-message
conversation, every memory and passage embedded. The 100k workspace has 20
more conversations sharing its global scope. Seeding is bulk (COPY): texts
are the turns of the recall corpus, and vectors reuse a pool of real
multilingual-e5-small vectors of those texts: a memory's vector is its own
text's, blended with another text's and moved by a little noise
(`--copies` keeps the earlier blend-free copies, 2,000 near ties per text at
1M, for comparison).

Three gunicorn servers with the production configuration (2 workers x 4
threads each) serve the same database, one per `RECALL_VECTOR_INDEX`: one
finds a query's nearest vectors in process (`process`), one in PostgreSQL
with pgvector (`database`, HNSW), and the default (`auto`) each scope where
it fits: in process within `RECALL_VECTOR_CACHE_MIB`, in pgvector past it.
Calls are interleaved across sizes and paths, one at a time,
each with a query never asked before (so each pays for its query vector), and
print, in one run:

- `context p50 ms` per size and path;
- the ratios of context p50 (100k and 1M against 10k), of the first call
  after a write (a new global memory and its vector) at 100k against 10k, and
  the two in-process workers' resident memory after context calls on 20
  conversations sharing the 100k global scope;
- the pgvector path's recall of the exact top 200: the same statement run
  with index scans off, over the same stored vectors (the in-process path is
  exact), and the cosine of the 200th neighbour each finds (the copies of
  one real vector are near ties: a miss there may cost nothing).

    .venv/bin/python bench/scale.py [--sizes 1000,10000,100000,1000000] [--calls 30]

Environment: REDIS_URL (default redis://127.0.0.1:6379) for the servers'
cache and broker (BENCH_REDIS_DB, default 11, and the next). Traffic goes
only to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PY = sys.executable
DB_NAME = "bench_scale"
CORPUS = ROOT / "bench" / "recall_corpus"
# Copies of a real vector differ by this much per component (a cosine of
# about 0.93 between two copies): near neighbours stay near, none are equal.
NOISE = 0.014
# A memory's vector is its text's with up to this share of another text's:
# 512 texts give a continuum of vectors, as a real scope's are, where copies
# alone gave 2,000 near ties per text at 1M (the exact top 200 then differs
# from any approximate one by noise alone).
BLEND = 0.4
SEED_CHUNK = 50_000
CONVERSATION_MESSAGES = 2000
SHARED_CONVERSATIONS = 20
TOP_K = 200
RECALL_QUERIES = 20


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _texts() -> list[str]:
    texts = []
    for path in sorted(CORPUS.glob("*.json")):
        for turn in json.loads(path.read_text())["turns"]:
            text = turn["content"].split(": ", 1)[-1].strip()
            if len(text) > 20:
                texts.append(text)
    return texts


def _queries() -> list[str]:
    out = []
    for path in sorted(CORPUS.glob("*.json")):
        out += [q["question"] for q in json.loads(path.read_text())["questions"] if q.get("language") == "en"]
    return out


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


class Seeder:
    """Bulk rows for one workspace, written with COPY."""

    def __init__(self, texts: list[str], pool: np.ndarray, rng: np.random.Generator, model: str, *,
                 blend: float = BLEND):
        from memories.recall.analysis import analyze, terms_text

        self.model = model
        self.blend = blend
        self.texts = texts
        self.pool = pool
        self.rng = rng
        analysed = [analyze(t) for t in texts]
        self.terms = [terms_text(a) for a in analysed]
        self.lengths = [len(a) for a in analysed]

    def vectors(self, templates: np.ndarray) -> np.ndarray:
        share = self.rng.uniform(0.0, self.blend, (len(templates), 1)).astype(np.float32)
        partners = self.rng.integers(0, len(self.pool), len(templates))
        base = (1 - share) * self.pool[templates] + share * self.pool[partners]
        base += self.rng.standard_normal((len(templates), self.pool.shape[1]), dtype=np.float32) * NOISE
        return base / np.linalg.norm(base, axis=1, keepdims=True)

    def memories(self, connection, workspace_id: str, count: int, tag: str) -> None:
        import hashlib

        from django.utils import timezone

        from memories.recall.index import memory_scope_token

        with connection.cursor() as cursor:
            cursor.execute("SELECT column_name, is_nullable FROM information_schema.columns "
                           "WHERE table_name = 'memories_memoryitem' ORDER BY ordinal_position")
            columns = cursor.fetchall()
        now = timezone.now()
        token = memory_scope_token(workspace_id, "global", "")
        raw = connection.connection
        for start in range(0, count, SEED_CHUNK):
            n = min(SEED_CHUNK, count - start)
            templates = self.rng.integers(0, len(self.texts), n)
            importance = np.round(self.rng.uniform(0.2, 0.95, n), 3)
            vectors = self.vectors(templates)
            ids = [f"mem_{tag}{start + i:012d}" for i in range(n)]
            with raw.cursor() as cur:
                names = [c for c, _ in columns]
                with cur.copy(f"COPY memories_memoryitem ({', '.join(names)}) FROM STDIN") as copy:
                    for i in range(n):
                        text = f"{self.texts[templates[i]]} (note {start + i})"
                        values = {"id": ids[i], "workspace_id": workspace_id, "scope": "global", "scope_id": "",
                                  "type": "fact", "content": text, "content_size_bytes": len(text.encode()),
                                  "importance": float(importance[i]), "confidence": 0.9, "sources": "[]",
                                  "source_memory_ids": "[]", "metadata": "{}", "status": "active", "lifecycle_status": "active",
                                  "version": 1, "created_at": now, "updated_at": now,
                                  "content_sha256": hashlib.sha256(text.encode()).hexdigest(),
                                  "token_count_estimate": len(text) // 4}
                        row = []
                        for name, nullable in columns:
                            if name in values:
                                row.append(values[name])
                            elif nullable == "YES":
                                row.append(None)
                            else:
                                raise RuntimeError(f"no bench value for memories_memoryitem.{name}")
                        copy.write_row(row)
                self._entries(cur, workspace_id, token, ids, templates, vectors, now)
            raw.commit()

    def _entries(self, cur, workspace_id, token, memory_ids, templates, vectors, now) -> None:
        half = vectors.astype("<f2")
        big = vectors.astype(">f4")
        header = np.array([vectors.shape[1], 0], dtype=">i2").tobytes()
        cur.execute("SELECT 1 FROM pg_attribute WHERE attrelid = 'memories_recallentry'::regclass "
                    "AND attname = 'embedding_vector'")
        with_vector = cur.fetchone() is not None
        columns = ["workspace_id", "kind", "scope_token", "memory_id", "start_char", "end_char", "terms", "length",
                   "embedding", "embedding_model", "content_sha256", "created_at"] + (
                      ["embedding_vector"] if with_vector else [])
        types = ["text", "text", "text", "text", "int4", "int4", "text", "int4", "bytea", "text", "text",
                 "timestamptz"] + (["bytea"] if with_vector else [])
        model = self.model
        with cur.copy(f"COPY memories_recallentry ({', '.join(columns)}) FROM STDIN WITH (FORMAT BINARY)") as copy:
            # The vector column takes pgvector's own binary form (dimensions,
            # a spare int16, big-endian float4s), written as raw bytes.
            copy.set_types(types)
            for i, memory_id in enumerate(memory_ids):
                t = templates[i]
                row = [workspace_id, "memory", token, memory_id, 0, 0, self.terms[t], self.lengths[t],
                       half[i].tobytes(), model, "", now]
                if with_vector:
                    row.append(header + big[i].tobytes())
                copy.write_row(row)


def _seed(sizes: list[int], texts: list[str], pool: np.ndarray, model: str, blend: float) -> dict[int, dict]:
    from django.db import connection

    from accounts.services import api_key_create, workspace_create
    from conversations.models import Message
    from conversations.services import messages_append
    from conversations.services.append import new_message
    from memories.recall import dense
    from memories.recall.index import passage_entries_rebuild
    from memories.recall.models import RecallEntry

    rng = np.random.default_rng(42)
    seeder = Seeder(texts, pool, rng, model, blend=blend)
    out = {}
    for size in sizes:
        started = time.perf_counter()
        ws = workspace_create(name=f"Scale {size}", slug=f"scale-{size}")
        key = api_key_create(workspace=ws, name="bench").raw_key
        seeder.memories(connection, ws.pk, size, tag=f"s{len(str(size))}")
        conversations = ["long"] + ([f"shared-{i}" for i in range(SHARED_CONVERSATIONS)] if size == 100_000 else [])
        for cid in conversations:
            total = CONVERSATION_MESSAGES if cid == "long" else 20
            for start in range(0, total, 100):
                batch = [new_message(role="user" if (start + i) % 2 == 0 else "assistant",
                                     content=texts[(start + i) * 7 % len(texts)]) for i in range(min(100, total - start))]
                messages_append(workspace=ws, external_id=cid, messages=batch)
            messages = list(Message.objects.filter(workspace_id=ws.pk, conversation__external_id=cid))
            passage_entries_rebuild(workspace_id=ws.pk, messages=messages)
        missing = list(RecallEntry.objects.filter(workspace_id=ws.pk, embedding_model="").values_list("id", flat=True))
        vectors = seeder.vectors(rng.integers(0, len(texts), len(missing)))
        dense.recall_vectors_store(list(zip(missing, vectors, strict=True)), model=model)
        out[size] = {"workspace": ws.pk, "key": key}
        print(f"seeded {size:>9,} global memories + {len(conversations)} conversation(s) "
              f"in {time.perf_counter() - started:.0f} s", flush=True)
    return out


@contextlib.contextmanager
def _server(env: dict[str, str], path: str):
    """A gunicorn of the production configuration; its log goes to a file
    (a pipe nobody reads would stall the server once full), whose end is
    printed if the server fails to start or the bench fails while it runs."""
    port = _free_port()
    log_path = Path(env["MEMORY_VAR_DIR"]) / f"gunicorn-{path}.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "-c", "memory_project/gunicorn.conf.py", "memory_project.wsgi",
         "--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "4",
         # Each server its own control socket: by default they share one.
         "--control-socket", str(Path(env["MEMORY_VAR_DIR"]) / f"gunicorn-{path}.ctl")],
        cwd=ROOT, env={**env, "RECALL_VECTOR_INDEX": path}, stdout=subprocess.DEVNULL, stderr=log)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=5).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError(f"gunicorn ({path}) did not start: {log_path.read_text()[-2000:]}")
        time.sleep(0.5)
    try:
        yield base, proc
    except BaseException:
        print(f"gunicorn ({path}) log, its end:\n{log_path.read_text()[-3000:]}", file=sys.stderr)
        raise
    finally:
        log.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def _context(client: httpx.Client, key: str, cid: str, query: str) -> float:
    started = time.perf_counter()
    response = client.post(f"/v1/conversations/{cid}/context", headers={"Authorization": f"Bearer {key}"},
                           json={"query": query, "max_messages": 10, "memory_token_budget": 1000})
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"context -> {response.status_code}: {response.text[:300]}")
    return elapsed


def _pgvector_recall(workspaces: dict[int, dict], queries: list[str]) -> dict[int, tuple[float, float, float]]:
    """The pgvector path's top 200 against the exact top 200 of the same
    stored vectors (the same statement with index scans off: a scan of the
    scope and a sort), per size, averaged over the queries: (recall, the
    exact 200th cosine, the approximate 200th cosine)."""
    from django.db import connection, transaction

    from memories.recall import embeddings, pgvector
    from memories.recall.index import memory_scope_token

    provider = embeddings.get_embedding_provider()
    out = {}
    for size, w in workspaces.items():
        token = memory_scope_token(w["workspace"], "global", "")
        found, exact_last, approximate_last = [], [], []
        for query in queries:
            vector = provider.embed_query(query)
            vector = vector / np.linalg.norm(vector)

            def nearest(vector=vector, token=token, w=w) -> tuple[set[int], float]:
                ids, scores = pgvector.nearest(workspace_id=w["workspace"], scope_tokens=[token],
                                               model=provider.name, query=vector, limit=TOP_K)
                return set(ids.tolist()), float(scores[-1]) if len(scores) else 0.0

            approximate, approximate_cosine = nearest()
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SET LOCAL enable_indexscan = off")
                cursor.execute("SET LOCAL enable_bitmapscan = off")
                exact, exact_cosine = nearest()
            found.append(len(exact & approximate) / max(1, len(exact)))
            exact_last.append(exact_cosine)
            approximate_last.append(approximate_cosine)
        out[size] = (float(np.mean(found)), float(np.mean(exact_last)), float(np.mean(approximate_last)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--calls", type=int, default=30, help="context calls per size and path")
    parser.add_argument("--writes", type=int, default=15, help="writes (then one call) per size")
    parser.add_argument("--copies", action="store_true", help="vectors as noisy copies of the texts', unblended")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    from tests.pgvector_server import pgvector_server

    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379").rstrip("/")
    redis_db = int(os.environ.get("BENCH_REDIS_DB", "11"))
    print(f"load: {os.getloadavg()[0]:.2f} (1 min) at start", flush=True)
    with pgvector_server(DB_NAME) as url:
        env = {**os.environ, "DATABASE_URL": url, "SECRET_KEY": "bench-only-secret-key-not-for-production",
               "DJANGO_SETTINGS_MODULE": "memory_project.settings", "PYTHONPATH": str(ROOT),
               "CELERY_BROKER_URL": f"{redis_url}/{redis_db}", "CACHE_URL": f"{redis_url}/{redis_db + 1}",
               "LOG_LEVEL": "WARNING", "API_RATE_LIMIT": "100000000/min", "EMBEDDING_PROVIDER": "none",
               "MEMORY_VAR_DIR": str(Path("/tmp/memory-bench-scale"))}
        Path(env["MEMORY_VAR_DIR"]).mkdir(exist_ok=True)
        os.environ.update(env)
        import django

        django.setup()
        import psycopg
        import redis
        from django.conf import settings
        from django.core.management import call_command

        admin = url.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{DB_NAME}"')
            conn.execute("ALTER SYSTEM SET maintenance_work_mem = '3GB'")
            conn.execute("ALTER SYSTEM SET max_parallel_maintenance_workers = 1")
            conn.execute("ALTER SYSTEM SET synchronous_commit = off")
            conn.execute("SELECT pg_reload_conf()")
        for db_url in (env["CELERY_BROKER_URL"], env["CACHE_URL"]):
            redis.Redis.from_url(db_url).flushdb()
        # Migrated with no provider, so the vector index is built once,
        # after the bulk load, not row by row during it.
        call_command("migrate", "--noinput", verbosity=0)
        texts = _texts()
        settings.EMBEDDING_PROVIDER = "offline"
        from memories.recall import embeddings, pgvector

        provider = embeddings.get_embedding_provider()
        started = time.perf_counter()
        pool = np.asarray(provider.embed_documents(texts[:512]), dtype=np.float32)
        texts = texts[:512]
        print(f"pool: {len(pool)} real vectors of corpus turns in {time.perf_counter() - started:.0f} s", flush=True)
        workspaces = _seed(sizes, texts, pool, provider.name, 0.0 if args.copies else BLEND)
        from django.db import connection

        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        pgvector.vector_index_ensure()
        print(f"HNSW index (m {settings.PGVECTOR_HNSW_M}, ef_construction {settings.PGVECTOR_HNSW_EF_CONSTRUCTION}, "
              f"ef_search {settings.PGVECTOR_EF_SEARCH}) "
              f"and ANALYZE in {time.perf_counter() - started:.0f} s", flush=True)

        env["EMBEDDING_PROVIDER"] = "offline"
        queries = _queries()
        rng = random.Random(7)
        counter = [0]

        def new_query() -> str:
            counter[0] += 1
            return f"{rng.choice(queries)} ({counter[0]})"

        with _server(env, "process") as (process_base, process_proc), \
                _server(env, "database") as (pg_base, pg_proc), \
                _server(env, "auto") as (auto_base, auto_proc), \
                httpx.Client(base_url=auto_base, timeout=120) as auto_client, \
                httpx.Client(base_url=process_base, timeout=120) as process_client, \
                httpx.Client(base_url=pg_base, timeout=120) as pg_client:
            paths = {"in-process": (process_client, process_proc), "pgvector": (pg_client, pg_proc),
                     "auto": (auto_client, auto_proc)}
            rss_start = {name: sum(_rss_mib(p) for p in _children(proc.pid)) for name, (_, proc) in paths.items()}
            # Warm: every worker loads what it holds (the first calls).
            for _ in range(4):
                for size in sizes:
                    for client, _ in paths.values():
                        _context(client, workspaces[size]["key"], "long", new_query())
            timings: dict[tuple[str, int], list[float]] = {(p, s): [] for p in paths for s in sizes}
            for _ in range(args.calls):
                for size in sizes:
                    for name, (client, _) in paths.items():
                        timings[(name, size)].append(_context(client, workspaces[size]["key"], "long", new_query()))
            # The first call after a write: a new global memory through the
            # API, its vector written as the pipeline writes it, then a call.
            from memories.recall import dense
            from memories.recall.models import RecallEntry

            after_write: dict[tuple[str, int], list[float]] = {(p, s): [] for p in paths for s in sizes}
            write_sizes = [s for s in sizes if s in (10_000, 100_000)]
            for i in range(args.writes):
                for size in write_sizes:
                    w = workspaces[size]
                    for name, (client, _) in paths.items():
                        response = client.post("/v1/memories", headers={"Authorization": f"Bearer {w['key']}"},
                                               json={"scope": "global", "type": "fact",
                                                     "content": f"{texts[i % len(texts)]} (written {name} {i})"})
                        if response.status_code != 201:
                            raise RuntimeError(f"write -> {response.status_code}: {response.text[:300]}")
                        entry = RecallEntry.objects.get(memory_id=response.json()["data"]["id"])
                        dense.recall_vectors_store([(entry.pk, pool[i % len(pool)])], model=provider.name)
                        after_write[(name, size)].append(_context(client, w["key"], "long", new_query()))
            # Twenty conversations sharing the 100k global scope, each asked.
            rss_shared = {}
            if 100_000 in sizes:
                for name, (client, proc) in paths.items():
                    for i in range(SHARED_CONVERSATIONS):
                        for _ in range(2):
                            _context(client, workspaces[100_000]["key"], f"shared-{i}", new_query())
                    rss_shared[name] = sum(_rss_mib(p) for p in _children(proc.pid))
            rss_end = {name: sum(_rss_mib(p) for p in _children(proc.pid)) for name, (_, proc) in paths.items()}
            reports = {name: [client.get("/healthz").json()["recall_vectors"] for _ in range(4)]
                       for name, (client, _) in paths.items()}

        p50 = {k: statistics.median(v) for k, v in timings.items()}
        for name in paths:
            for size in sizes:
                print(f"context p50 ms {name} {size:>9,} {p50[(name, size)]:.1f} "
                      f"(p90 {np.percentile(timings[(name, size)], 90):.1f}, {len(timings[(name, size)])} calls)")
        for name in paths:
            if 10_000 in sizes and 100_000 in sizes:
                print(f"ratio context_p50_100k_vs_10k {p50[(name, 100_000)] / p50[(name, 10_000)]:.2f} <= 1.3"
                      f" ({name})")
            if 10_000 in sizes and 1_000_000 in sizes:
                print(f"ratio context_p50_1m_vs_10k {p50[(name, 1_000_000)] / p50[(name, 10_000)]:.2f} <= 2.0"
                      f" ({name})")
            if write_sizes == [10_000, 100_000]:
                first = {s: statistics.median(after_write[(name, s)]) for s in write_sizes}
                print(f"ratio context_first_call_after_write_100k_vs_10k {first[100_000] / first[10_000]:.2f} <= 1.5"
                      f" ({name}: {first[10_000]:.1f} / {first[100_000]:.1f} ms)")
            if name in rss_shared:
                print(f"ratio worker_rss_20_conversations_100k_mib {rss_shared[name]:.0f} <= 1024"
                      f" ({name}, two workers summed; at start {rss_start[name]:.0f}, at the end {rss_end[name]:.0f})")
            print(f"vector cache ({name}), per worker asked: {reports[name]}")
        recall = _pgvector_recall(workspaces, queries[:RECALL_QUERIES])
        for size in sizes:
            share, exact_cosine, approximate_cosine = recall[size]
            print(f"pgvector recall@{TOP_K} {size:>9,} {share:.3f} >= 0.95 (against an exact search of the "
                  f"same vectors, {RECALL_QUERIES} queries; the in-process path is exact; the 200th neighbour's "
                  f"cosine {approximate_cosine:.4f}, exact {exact_cosine:.4f})")
        print(f"load: {os.getloadavg()[0]:.2f} (1 min) at the end; vectors: a pool of {len(pool)} real e5 vectors, "
              + ("each copy moved by noise" if args.copies else f"blended with another's (up to {BLEND}) and moved by noise"),
              flush=True)
        from django.db import connections

        connections.close_all()


if __name__ == "__main__":
    main()
