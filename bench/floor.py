"""The hot paths beside their floors, measured in one run.

Starts the service under the production gunicorn configuration
(`memory_project/gunicorn.conf.py`, 2 workers x 4 threads as `make run`) twice:
on PostgreSQL + Redis (database `bench_floor`, Redis databases BENCH_REDIS_DB
and the next one for broker and cache) and in the embedded mode (a SQLite file
and the SQLite cache under MEMORY_VAR_DIR/bench_floor). Both add two floor
routes (`bench.floor_server`): an authenticated DRF view that does nothing, and
one that inserts a row and commits. Then, in 3 interleaved rounds (each path
beside its floor or anchor within a round, the order alternating; the
latency pairs, deep page and memory list, request by request), it measures
every goal and prints, for each, the median of the rounds:

    ratio <name> <value> <op> <goal>

(`<name>[sqlite]` / `<name>[postgresql]` for goals that hold on both), then
the absolute figures and the machine's load average. Extraction and its
memory run in child processes, through the pipeline's job service.

What each figure measures:
- append_vs_floor: appends of one message (16 clients) beside the floor
  view that inserts a row and commits.
- page_vs_floor: a page of 20 messages beside the authenticated floor view
  that does nothing, server-bound: client processes send prepared bytes on
  kept-alive sockets (httpx in this process cost the client as much CPU as
  the server spent, so the ratio was half the client's).
- batch_append_vs_multirow_insert: messages/s of 100-message batch appends
  beside one multi-row INSERT of the same 100 rows per commit.
- openai_session_vs_sqlalchemy: the client's OpenAI Agents session beside
  the SDK's SQLAlchemySession on asyncpg, the driver the SDK documents.
- langgraph_vs_postgres_saver: a 10-step graph on the client's checkpointer
  beside LangGraph's PostgresSaver.
- context_p50_ms_10k: POST /context on a conversation of 10,000 messages
  and 10,000 memories, fully indexed (every message's passages and every
  memory in the recall index, each with its dense vector), dense recall on,
  a different query on every call (no query vector is remembered).
- extraction_end_to_end_floors_per_s: a conversation's extraction job and
  the embedding of everything it indexed, as the worker runs them.

    .venv/bin/python bench/floor.py [--quick] [--reuse] [--only NAME,...]

Environment: PG_URL (server, default postgres://postgres@127.0.0.1:5432),
REDIS_URL (default redis://127.0.0.1:6379), BENCH_REDIS_DB (default 13; the
cache uses the next one; shared with bench/load.py: run them one at a time),
MEMORY_VAR_DIR. Traffic goes only to 127.0.0.1; it stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import operator
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, TypedDict

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # memory_client, for the adapters' side
PY = sys.executable
DB_NAME = "bench_floor"
VAR = Path(os.environ.get("MEMORY_VAR_DIR", ROOT / "var")) / "bench_floor"
FLOOR_TABLE = "bench_floor_rows"
ROUNDS = 3
# WARM_UP: the two framework measurements time a few hundred milliseconds a
# round, each side through a new client or connection; one untimed run or
# turn per side first keeps one-time costs out of the figure (a new database
# connection's first statements on the anchors' side, a server thread's first
# statements of a kind on ours: 5-8 and up to 12-30 ms here, against a run of
# 20-35 ms), as the latency measurements warm up before theirs.
# (name, value, op, goal) of every goal, in the order the issue lists them.
GOALS = {
    "append_vs_floor": (">=", 0.6),
    "page_vs_floor": (">=", 0.5),
    "batch_append_vs_multirow_insert": (">=", 0.2),
    "openai_session_vs_sqlalchemy": (">=", 0.5),
    "langgraph_vs_postgres_saver": (">=", 0.5),
    "deep_page_vs_first": ("<=", 1.1),
    "memory_list_q_100k_vs_10k": ("<=", 1.5),
    "extraction_floors_per_s": (">=", 2000),
    "extraction_peak_rss_10k_vs_1k": ("<=", 1.2),
    "context_p50_ms_10k": ("<=", 50),
    "extraction_end_to_end_floors_per_s": ("", None),
}
BOTH = ("deep_page_vs_first", "memory_list_q_100k_vs_10k", "extraction_floors_per_s")
WORDS = ["tea", "coffee", "Berlin", "Lisbon", "deadline", "invoice", "garden", "piano", "ticket", "report", "budget", "hiring", "audit", "design", "roadmap", "launch", "flight", "hotel", "dinner", "meeting", "doctor", "birthday", "gift", "train", "museum", "bicycle", "recipe", "garden", "salary", "contract", "apartment", "lease", "insurance", "vacation", "concert", "novel", "podcast", "marathon", "yoga", "sister", "brother", "manager", "client", "会议", "咖啡", "绿茶", "上海", "杭州", "报告", "预算", "航班", "酒店", "生日"]
Q_WORD = "marathon"
# Conversations, sessions and threads a run writes are its own (`--reuse`).
RUN = time.strftime("%H%M%S")


class GraphState(TypedDict):
    """The LangGraph benchmark's state: each of the 10 steps appends its name."""

    steps: Annotated[list, operator.add]


# --- Servers ----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(kind: str) -> dict[str, str]:
    var = VAR / kind
    var.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "MEMORY_VAR_DIR": str(var),
        "DJANGO_SETTINGS_MODULE": "bench.floor_server.settings",
        "SECRET_KEY": "bench-only-secret-key-not-for-production",
        "API_RATE_LIMIT": "100000000/min",
        "API_AUTH_FAILURE_RATE": "100000000/min",
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
        # Dense recall on, as in the default configuration (the context goal is measured with it).
        "EMBEDDING_PROVIDER": "offline",
    }
    for name in ("DATABASE_URL", "CACHE_URL", "CELERY_BROKER_URL", "SQLITE_PATH", "CACHE_DIR"):
        env.pop(name, None)
    if kind == "postgresql":
        redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379").rstrip("/")
        db = int(os.environ.get("BENCH_REDIS_DB", "13"))
        env["DATABASE_URL"] = f"{_pg_server()}/{DB_NAME}"
        env["CELERY_BROKER_URL"] = f"{redis_url}/{db}"
        env["CACHE_URL"] = f"{redis_url}/{db + 1}"
    else:
        env["SQLITE_PATH"] = str(var / f"{DB_NAME}.sqlite3")
    return env


def _pg_server() -> str:
    return os.environ.get("PG_URL", "postgres://postgres@127.0.0.1:5432").rstrip("/")


def _pg_dsn(database: str = DB_NAME) -> str:
    return f"{_pg_server()}/{database}".replace("postgres://", "postgresql://", 1)


def _reset_database(kind: str, env: dict[str, str]) -> None:
    if kind == "postgresql":
        import psycopg
        import redis

        with psycopg.connect(_pg_dsn("postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{DB_NAME}"')
        for url in (env["CELERY_BROKER_URL"], env["CACHE_URL"]):
            redis.Redis.from_url(url).flushdb()
    else:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{env['SQLITE_PATH']}{suffix}").unlink(missing_ok=True)
        shutil.rmtree(Path(env["MEMORY_VAR_DIR"]) / "cache", ignore_errors=True)
    subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)


class Server:
    def __init__(self, kind: str, env: dict[str, str]):
        self.kind, self.env = kind, env
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [str(Path(PY).parent / "gunicorn"), "-c", "memory_project/gunicorn.conf.py", "memory_project.wsgi",
             "--bind", f"127.0.0.1:{self.port}", "--workers", "2", "--threads", "4", "--timeout", "120"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"{kind} server did not come up")

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGKILL)


# --- Seeding (a child process per database, with that database's settings) -------------


SEED = r'''
import json, random, sys
import django
django.setup()
from django.db import connection, transaction
from accounts.services import api_key_create, workspace_create
from conversations.models import Branch, Conversation, Message
from conversations.services import conversation_get_or_create
from memories.models import MemoryItem
from memories.services.scopes import branch_scope_id
from memories.services.versioning import content_fingerprint

kind, quick = sys.argv[1], sys.argv[2] == "1"
POOL = 150 if quick else 400
words = sys.argv[3].split(",")
rng = random.Random(7)
out = {}
bench = workspace_create(name="Bench", slug="bench")
out["keys"] = [api_key_create(workspace=bench, name=f"client-{i}").raw_key for i in range(16)]

with connection.cursor() as cursor:
    pk = "BIGSERIAL PRIMARY KEY" if connection.vendor == "postgresql" else "INTEGER PRIMARY KEY AUTOINCREMENT"
    cursor.execute(f"CREATE TABLE {sys.argv[4]} (id {pk}, workspace_id VARCHAR(40) NOT NULL, body TEXT NOT NULL)")
    cursor.execute(f"CREATE INDEX {sys.argv[4]}_ws ON {sys.argv[4]} (workspace_id)")

def conversation_with(external_id, n, text):
    conversation, _ = conversation_get_or_create(workspace=bench, external_id=external_id)
    branch = Branch.objects.get(conversation=conversation, name="main")
    rows = [Message(workspace=bench, conversation=conversation, branch=branch, floor_no=i, role="user" if i % 2 else "assistant",
                    content=text(i), content_size_bytes=60, token_estimate=15) for i in range(1, n + 1)]
    with transaction.atomic():
        Message.objects.bulk_create(rows, batch_size=2000)
        # Everything counts as read: the benchmark's own appends are what the pipeline sees.
        Branch.objects.filter(pk=branch.pk).update(next_floor_no=n + 1, appended_tokens=15 * n,
                                                   processed_floor_no=n, processed_tokens=15 * n)
        Conversation.objects.filter(pk=conversation.pk).update(message_count=n)
    return conversation, branch

_, big = conversation_with("bench:big", 10_000, lambda i: f"message number {i} with a little text to carry along")
out["deep_cursor"] = Message.objects.get(branch=big, floor_no=9_800).pk

def memories(workspace, n, scope, scope_id):
    batch = []
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(8)) + f" #{i}"
        sha, size = content_fingerprint(text)
        batch.append(MemoryItem(workspace=workspace, scope=scope, scope_id=scope_id(i), type="fact", content=text,
                                content_sha256=sha, content_size_bytes=size, importance=round(rng.random(), 3),
                                confidence=round(rng.random(), 3), token_count_estimate=len(text) // 4))
        if len(batch) == 5000:
            MemoryItem.objects.bulk_create(batch)
            batch = []
    MemoryItem.objects.bulk_create(batch)

for label, n in (("10k", 10_000), ("100k", 100_000 if not quick else 30_000)):
    workspace = workspace_create(name=f"Memories {label}", slug=f"memories-{label}")
    memories(workspace, n, "chat", lambda i: f"conv-{i % 500}")
    out[f"key_{label}"] = api_key_create(workspace=workspace, name="lists").raw_key

if kind == "postgresql":
    # The context's scope fully indexed: every message's passages and every
    # memory in the recall index, each entry with the real vector of its
    # text. The texts are drawn from a pool, so the model embeds each distinct
    # text once (at ~0.1-0.2 s a text on this machine, 20,000 distinct ones
    # would take the better part of an hour); every entry still has its own
    # row and vector, and the context path scores all of them.
    from conversations.models import Message as M
    from memories.recall.models import RecallEntry
    from memories.recall import embeddings
    from memories.recall.index import memory_entries_rebuild, passage_entries_rebuild
    pool = sorted({" ".join(rng.choice(words) for _ in range(10)) for _ in range(POOL)})
    conv, ctx = conversation_with("bench:ctx", 10_000, lambda i: pool[i % len(pool)])
    ctx_items = []
    for i in range(10_000):
        text = pool[(i * 7 + 3) % len(pool)]
        sha, size = content_fingerprint(text)
        ctx_items.append(MemoryItem(workspace=bench, scope="branch", scope_id=branch_scope_id("bench:ctx", "main"),
                                    type="fact", content=text, content_sha256=sha, content_size_bytes=size,
                                    importance=round(rng.random(), 3), confidence=round(rng.random(), 3),
                                    token_count_estimate=len(text) // 4))
    MemoryItem.objects.bulk_create(ctx_items, batch_size=2000)
    with transaction.atomic():
        memory_entries_rebuild(list(MemoryItem.objects.filter(workspace=bench, scope="branch")), new=True)
        rows = list(M.objects.filter(branch=ctx).order_by("floor_no"))
        for start in range(0, len(rows), 1000):
            passage_entries_rebuild(workspace_id=bench.pk, messages=rows[start:start + 1000], conversation_id=conv.pk)
    provider = embeddings.get_embedding_provider()
    vectors = provider.embed_documents(pool)
    by_text = dict(zip(pool, vectors))
    entries = RecallEntry.objects.filter(workspace=bench).values_list("id", "memory_id", "message_id", "start_char", "end_char")
    texts = dict(MemoryItem.objects.filter(workspace=bench, scope="branch").values_list("id", "content"))
    texts.update(M.objects.filter(branch=ctx).values_list("id", "content"))
    updates = []
    for entry_id, memory_id, message_id, start, end in entries:
        text = texts[memory_id] if memory_id else texts[message_id][start:end]
        vector = by_text.get(text)
        if vector is None:  # a passage that is part of a message: its own vector
            vector = provider.embed_documents([text])[0]
            by_text[text] = vector
        updates.append(RecallEntry(id=entry_id, embedding=embeddings.vector_to_bytes(vector), embedding_model=provider.name))
    RecallEntry.objects.bulk_update(updates, ["embedding", "embedding_model"], batch_size=2000)
    out["ctx_entries"] = len(updates)
with connection.cursor() as cursor:
    cursor.execute("ANALYZE")
print(json.dumps(out))
'''


def _seed(kind: str, env: dict[str, str], quick: bool) -> dict:
    started = time.perf_counter()
    result = subprocess.run(
        [PY, "-c", SEED, kind, "1" if quick else "0", ",".join(WORDS), FLOOR_TABLE],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True,
    )
    print(f"seeded {kind} in {time.perf_counter() - started:.0f} s", flush=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


# --- Extraction children ------------------------------------------------------------


EXTRACT = r'''
import json, os, sys, time
import django
django.setup()
from accounts.services import workspace_create
from conversations.models import Branch, Message
from conversations.services import conversation_get_or_create
from memories.models import JobKind
from memories.services.jobs import memory_job_enqueue
from memories.services.pipeline.execute import memory_job_execute
from memories.services.scopes import branch_scope_id

floors, warm_up, end_to_end = int(sys.argv[1]), sys.argv[2] == "1", sys.argv[3] == "1"
texts = [
    "I live in Berlin and I prefer tea in the morning.",
    "Please remind me to send the audit report before Friday.",
    "The audit report is done, I sent it yesterday.",
    "My budget is 400 dollars for the design project.",
    "我住在上海，我喜欢喝绿茶。",
    "请提醒我周五之前提交预算报告。",
]

def conversation(name, n):
    workspace = workspace_create(name=name, slug=name)
    conv, _ = conversation_get_or_create(workspace=workspace, external_id=name)
    branch = Branch.objects.get(conversation=conv, name="main")
    Message.objects.bulk_create([
        Message(workspace=workspace, conversation=conv, branch=branch, floor_no=i, role="user" if i % 2 else "assistant",
                content=texts[i % len(texts)] + f" ({i})", token_estimate=15) for i in range(1, n + 1)
    ], batch_size=2000)
    Branch.objects.filter(pk=branch.pk).update(next_floor_no=n + 1, appended_tokens=15 * n)
    return workspace, branch_scope_id(name, "main")

def extract(name, n):
    workspace, scope_id = conversation(name, n)
    # The job service: what a threshold crossing or a rebuild request queues.
    # Its broker message waits unread (no worker runs here); the job runs now.
    job, _ = memory_job_enqueue(workspace=workspace, kind=JobKind.EXTRACT, scope="branch", scope_id=scope_id)
    started = time.perf_counter()
    memory_job_execute(job_id=job.pk)
    if end_to_end:
        # What the worker runs next for the job's workspace: the dense
        # vectors of everything the extraction indexed (passages, memories).
        from memories.recall.dense import recall_embed_pending
        while recall_embed_pending(workspace_id=workspace.pk):
            pass
    elapsed = time.perf_counter() - started
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    return elapsed

def peak_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

stamp = str(time.time_ns())
if warm_up:
    extract(f"warm-{stamp}", 100)  # loads what the first job loads (tokenizer tables, models)
    with open("/proc/self/clear_refs", "w") as f:  # resets the peak RSS (VmHWM)
        f.write("5")
elapsed = extract(f"x-{stamp}", floors)
print(json.dumps({"floors_per_s": floors / elapsed, "seconds": elapsed, "peak_kib": peak_kib()}))
'''


def _extract(env: dict[str, str], floors: int, *, warm_up: bool, end_to_end: bool = False) -> dict:
    # What the job queues after it (compaction, embeddings) goes to the broker
    # unread. Without `end_to_end` only the extraction is timed, without
    # vectors; with it, the extraction and then the embedding of what it
    # indexed, with the offline model.
    child_env = {**env, "CELERY_TASK_ALWAYS_EAGER": "0", "EMBEDDING_PROVIDER": "offline" if end_to_end else "none"}
    result = subprocess.run([PY, "-c", EXTRACT, str(floors), "1" if warm_up else "0", "1" if end_to_end else "0"],
                            cwd=ROOT, env=child_env, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"extraction child failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


# --- Measuring ------------------------------------------------------------------------


def _throughput(request, *, clients: int, seconds: float) -> float:
    """Requests per second that `clients` threads, each with its own
    keep-alive connection, complete in `seconds`. `request(http, client, n)`."""
    done = [0] * clients
    errors: list[str] = []
    stop_at = time.monotonic() + seconds

    def run(index: int) -> None:
        with httpx.Client(timeout=60) as http:
            n = 0
            # At least one request each: on a busy machine a thread may
            # start after the slice has ended.
            while n == 0 or time.monotonic() < stop_at:
                response = request(http, index, n)
                if response.status_code >= 300:
                    errors.append(f"{response.status_code} {response.text[:200]}")
                    return
                n += 1
            done[index] = n

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError(f"requests failed: {errors[:3]}")
    return sum(done) / (time.monotonic() - started)


# Throughput goals are timed in this many alternating slices a side: the
# machine's speed drifts by a third over minutes here, and two 5-second
# stretches one after the other put that drift into the ratio.
SLICES = 5


def _turns(round_no: int) -> Iterator[tuple[int, int]]:
    """(slice, side) of each of a round's 2 x `SLICES` turns: the sides (0
    and 1) take turns about, and which goes first alternates by round."""
    order = (1, 0) if round_no % 2 else (0, 1)
    for part in range(SLICES):
        for side in order:
            yield part, side


def _throughputs(round_no: int, first, second, *, clients: int, seconds: float) -> tuple[float, float]:
    """`_throughput` of two request functions, `seconds` each, taken in
    `SLICES` turns a side (`_turns`)."""
    rates: tuple[list[float], list[float]] = ([], [])
    for _, side in _turns(round_no):
        rates[side].append(_throughput((first, second)[side], clients=clients, seconds=seconds / SLICES))
    return statistics.mean(rates[0]), statistics.mean(rates[1])


def _latencies(http: httpx.Client, call, n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        response = call(http)
        elapsed = time.perf_counter() - started
        if response.status_code >= 300:
            raise RuntimeError(f"{response.status_code} {response.text[:200]}")
        out.append(elapsed * 1000)
    return out


def _alternating(round_no: int, first, second, n: int) -> tuple[list[float], list[float]]:
    """Latencies of two calls taken turn about, `n` of each: request by
    request, so that a drift in the machine's speed (minutes-long swings of
    a third here) falls on both alike. `first()` and `second()` each make one
    request; which goes first in a turn alternates by round."""
    a: list[float] = []
    b: list[float] = []
    order = ((second, b), (first, a)) if round_no % 2 else ((first, a), (second, b))
    for _ in range(n):
        for call, out in order:
            started = time.perf_counter()
            response = call()
            out.append((time.perf_counter() - started) * 1000)
            if response.status_code >= 300:
                raise RuntimeError(f"{response.status_code} {response.text[:200]}")
    return a, b


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _pair(round_no: int, first, second):
    """Run the two measurements in an order that alternates by round."""
    if round_no % 2:
        b = second()
        a = first()
    else:
        a = first()
        b = second()
    return a, b


def measure_append(server: Server, seed: dict, round_no: int, seconds: float) -> tuple[float, float]:
    keys = seed["keys"]
    body = {"role": "user", "content": "I moved to Lisbon last spring and I still prefer tea in the morning."}

    def append(http, client, n):
        return http.post(f"{server.base}/v1/conversations/append-{RUN}-{round_no}-{client}/messages", json=body,
                         headers=_auth(keys[client]))

    def insert(http, client, n):
        return http.post(f"{server.base}/v1/bench/floor/insert", json=body, headers=_auth(keys[client]))

    return _throughputs(round_no, append, insert, clients=16, seconds=seconds)


def _socket_throughput(port: int, request: bytes, *, clients: int, seconds: float) -> float:
    """Requests per second that `clients` processes complete in `seconds`,
    each sending `request` (prepared bytes) one at a time on a kept-alive
    socket (`bench.server_bound._client`): the server's CPU decides the rate,
    not this process's."""
    import multiprocessing

    from bench.server_bound import _client

    counts: multiprocessing.Queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=_client, args=(port, request, seconds, counts)) for _ in range(clients)]
    started = time.monotonic()
    for proc in procs:
        proc.start()
    done = sum(counts.get(timeout=seconds + 60) for _ in procs)
    for proc in procs:
        proc.join()
    return done / (time.monotonic() - started)


def measure_page(server: Server, seed: dict, round_no: int, seconds: float) -> tuple[float, float]:
    from bench.server_bound import _request

    key = seed["keys"][5]
    page = _request("GET", "/v1/conversations/bench:big/messages?limit=20", key)
    ping = _request("GET", "/v1/bench/floor/ping", key)
    rates: tuple[list[float], list[float]] = ([], [])
    for _, side in _turns(round_no):
        rates[side].append(_socket_throughput(server.port, (page, ping)[side], clients=4, seconds=seconds / SLICES))
    return statistics.mean(rates[0]), statistics.mean(rates[1])


def measure_batch(server: Server, seed: dict, round_no: int, seconds: float) -> tuple[float, float]:
    import psycopg

    key = seed["keys"][0]
    messages = [{"role": "user" if i % 2 else "assistant", "content": f"Turn {i}: the train leaves at nine."}
                for i in range(100)]

    def batches() -> float:
        sent, started = 0, time.monotonic()
        with httpx.Client(timeout=60, headers=_auth(key)) as http:
            while sent == 0 or time.monotonic() - started < seconds:
                # A new conversation every 90 batches: 10,000 messages is a conversation's cap.
                cid = f"batch-{RUN}-{round_no}-{sent // 9000}"
                response = http.post(f"{server.base}/v1/conversations/{cid}/messages", json={"messages": messages})
                if response.status_code != 201:
                    raise RuntimeError(f"{response.status_code} {response.text[:200]}")
                sent += len(messages)
        return sent / (time.monotonic() - started)

    def multirow() -> float:
        # The same 100 messages as one multi-row INSERT and a commit.
        rows, started = 0, time.monotonic()
        values = [value for message in messages for value in ("raw", json.dumps(message))]
        statement = f"INSERT INTO {FLOOR_TABLE} (workspace_id, body) VALUES " + ", ".join(["(%s, %s)"] * len(messages))
        with psycopg.connect(_pg_dsn()) as conn:
            while rows == 0 or time.monotonic() - started < seconds:
                conn.execute(statement, values)
                conn.commit()
                rows += len(messages)
        return rows / (time.monotonic() - started)

    return _pair(round_no, batches, multirow)


def measure_openai(server: Server, seed: dict, round_no: int, turns: int) -> tuple[float, float]:
    from agents.extensions.memory import SQLAlchemySession

    from memory_client import MemoryClient

    items = [{"role": "user", "content": "Book me a table for two."},
             {"type": "function_call", "call_id": "c1", "name": "book", "arguments": "{\"people\": 2}"},
             {"type": "function_call_output", "call_id": "c1", "output": "booked"},
             {"role": "assistant", "content": "Done: a table for two at eight."}]

    async def turn(session) -> None:
        await session.add_items(items)
        got = await session.get_items(limit=20)
        assert got, "the session read nothing back"

    async def run(session) -> float:
        await turn(session)  # untimed: each side's first turn (see WARM_UP)
        started = time.perf_counter()
        for _ in range(turns):
            await turn(session)
        return turns / (time.perf_counter() - started)

    def ours() -> float:
        client = MemoryClient(server.base, seed["keys"][1])
        session = client.openai_session(f"oai-{RUN}-{round_no}")
        try:
            return asyncio.run(run(session))
        finally:
            session.close()
            client.close()

    def theirs() -> float:
        async def go() -> float:
            session = SQLAlchemySession.from_url(f"sa-{RUN}-{round_no}", url=_pg_dsn().replace("postgresql://", "postgresql+asyncpg://"),
                                                 create_tables=True)
            try:
                return await run(session)
            finally:
                await session.engine.dispose()

        return asyncio.run(go())

    return _pair(round_no, ours, theirs)


def measure_langgraph(server: Server, seed: dict, round_no: int, runs: int) -> tuple[float, float]:
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.graph import END, START, StateGraph

    from memory_client import MemoryClient

    def graph_with(checkpointer):
        builder = StateGraph(GraphState)
        names = [f"step{i}" for i in range(10)]
        for name in names:
            builder.add_node(name, lambda state, name=name: {"steps": [name]})
        builder.add_edge(START, names[0])
        for a, b in zip(names, names[1:], strict=False):
            builder.add_edge(a, b)
        builder.add_edge(names[-1], END)
        return builder.compile(checkpointer=checkpointer)

    def invoke(graph, thread_id: str) -> None:
        result = graph.invoke({"steps": []}, {"configurable": {"thread_id": thread_id}})
        assert len(result["steps"]) == 10

    client = MemoryClient(server.base, seed["keys"][2])
    try:
        with PostgresSaver.from_conn_string(_pg_dsn()) as saver:
            saver.setup()
            sides = [(graph_with(client.langgraph_checkpointer), "ours"), (graph_with(saver), "theirs")]
            for graph, prefix in sides:
                invoke(graph, f"{prefix}-{RUN}-{round_no}-warm-up")  # untimed (see WARM_UP)
            # The runs of a side in SLICES turns about, as the throughput
            # goals: a busy spell of the machine falls on both sides, not on
            # one side's block (one run here had two of its three rounds at
            # 30 runs/s on our side against 50-58 in every other).
            elapsed = [0.0, 0.0]
            for part, side in _turns(round_no):
                graph, prefix = sides[side]
                started = time.perf_counter()
                for n in range(part * runs // SLICES, (part + 1) * runs // SLICES):
                    invoke(graph, f"{prefix}-{RUN}-{round_no}-{n}")
                elapsed[side] += time.perf_counter() - started
    finally:
        client.close()
    return runs / elapsed[0], runs / elapsed[1]


def measure_deep_page(server: Server, seed: dict, round_no: int, n: int) -> tuple[float, float]:
    url = f"{server.base}/v1/conversations/bench:big/messages"
    with httpx.Client(timeout=60, headers=_auth(seed["keys"][3])) as http:
        deep = lambda h: h.get(url, params={"limit": 20, "after": seed["deep_cursor"]})  # noqa: E731
        first = lambda h: h.get(url, params={"limit": 20})  # noqa: E731
        _latencies(http, first, 3)
        a, b = _alternating(round_no, lambda: deep(http), lambda: first(http), n)
    return statistics.median(a), statistics.median(b)


def measure_memory_list(server: Server, seed: dict, round_no: int, n: int) -> tuple[float, float]:
    url = f"{server.base}/v1/memories"

    params = {"q": Q_WORD, "limit": 20}
    with (httpx.Client(timeout=60, headers=_auth(seed["key_100k"])) as big,
          httpx.Client(timeout=60, headers=_auth(seed["key_10k"])) as small):
        for http in (big, small):
            _latencies(http, lambda h: h.get(url, params=params), 3)
        a, b = _alternating(round_no, lambda: big.get(url, params=params), lambda: small.get(url, params=params), n)
    return _p(a, 0.95), _p(b, 0.95)


def measure_context(server: Server, seed: dict, n: int, round_no: int) -> float:
    """The p50 of `n` context calls, each with a query of its own (the
    service remembers recent query vectors: a repeated query would skip the
    model)."""
    import random

    rng = random.Random(f"{RUN}-{round_no}")
    url = f"{server.base}/v1/conversations/bench:ctx/context"

    def call(h: httpx.Client) -> httpx.Response:
        a, b, c = rng.sample(WORDS, 3)
        body = {"query": f"what about the {a}, the {b} and the {c} budget? ({rng.random():.6f})",
                "memory_token_budget": 2000, "max_messages": 20}
        return h.post(url, json=body)

    with httpx.Client(timeout=120, headers=_auth(seed["keys"][4])) as http:
        _latencies(http, call, 2)
        return statistics.median(_latencies(http, call, n))


# --- The run ---------------------------------------------------------------------------


# What `--only` may name: each measurement and the figures it gives.
MEASURES = ("append", "page", "batch", "openai", "langgraph", "deep_page", "memory_list", "context", "extraction",
            "extraction_end_to_end", "extraction_rss")
# Measurements that need the embedded (SQLite) service too.
ON_SQLITE = ("deep_page", "memory_list", "extraction")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller data and shorter runs (a smoke test)")
    parser.add_argument("--reuse", action="store_true", help="keep the databases a previous run seeded")
    parser.add_argument("--only", default=",".join(MEASURES),
                        help=f"comma-separated measurements to run (default all: {','.join(MEASURES)})")
    args = parser.parse_args()
    only = set(args.only.split(","))
    if only - set(MEASURES):
        parser.error(f"unknown measurements: {sorted(only - set(MEASURES))}")
    seconds = 2.0 if args.quick else 5.0
    samples = 15 if args.quick else 40
    figures: dict[str, list] = defaultdict(list)

    kinds = ("postgresql", "sqlite") if only & set(ON_SQLITE) else ("postgresql",)
    envs = {kind: _env(kind) for kind in kinds}
    seeds = {}
    for kind, env in envs.items():
        saved = Path(env["MEMORY_VAR_DIR"]) / "seed.json"
        if args.reuse and saved.exists():
            seeds[kind] = json.loads(saved.read_text())
            continue
        print(f"preparing {kind} ...", flush=True)
        _reset_database(kind, env)
        seeds[kind] = _seed(kind, env, args.quick)
        saved.write_text(json.dumps(seeds[kind]))

    servers: dict[str, Server] = {}
    try:
        for kind, env in envs.items():
            if kind == "postgresql" or only & {"deep_page", "memory_list"}:
                servers[kind] = Server(kind, env)
        pg = servers["postgresql"]
        seed = seeds["postgresql"]
        for round_no in range(ROUNDS):
            print(f"round {round_no + 1} of {ROUNDS} ...", flush=True)
            if "append" in only:
                figures["append_per_s"].append(measure_append(pg, seed, round_no, seconds))
            if "page" in only:
                figures["page_per_s"].append(measure_page(pg, seed, round_no, seconds))
            if "batch" in only:
                figures["batch_messages_per_s"].append(measure_batch(pg, seed, round_no, seconds))
            if "openai" in only:
                figures["openai_turns_per_s"].append(measure_openai(pg, seed, round_no, 10 if args.quick else 25))
            if "langgraph" in only:
                # 20 runs a side: one slow run in eight moved a round's ratio a lot on a busy machine.
                figures["langgraph_runs_per_s"].append(measure_langgraph(pg, seed, round_no, 3 if args.quick else 20))
            for kind, server in servers.items():
                if "deep_page" in only:
                    figures[f"deep_page_ms[{kind}]"].append(measure_deep_page(server, seeds[kind], round_no, samples))
                if "memory_list" in only:
                    figures[f"memory_list_q_p95_ms[{kind}]"].append(
                        measure_memory_list(server, seeds[kind], round_no, samples))
            if "context" in only:
                figures["context_ms"].append((measure_context(pg, seed, 8 if args.quick else 20, round_no),))
    finally:
        for server in servers.values():
            server.stop()

    # Throughput on a 2,000-floor conversation after a warm-up, 3 rounds per
    # database; end to end (with the vectors) on PostgreSQL; peak memory at
    # 1,000 and 10,000 floors, once.
    if "extraction" in only:
        floors = 500 if args.quick else 2_000
        for _ in range(ROUNDS):
            for kind, env in envs.items():
                figures[f"extraction_floors_per_s[{kind}]"].append(
                    (_extract(env, floors, warm_up=True)["floors_per_s"],))
    if "extraction_end_to_end" in only:
        floors = 100 if args.quick else 300
        for _ in range(1 if args.quick else ROUNDS):
            figures["extraction_end_to_end_floors_per_s"].append(
                (_extract(envs["postgresql"], floors, warm_up=True, end_to_end=True)["floors_per_s"],))
    if "extraction_rss" in only:
        sizes = (300, 3_000) if args.quick else (1_000, 10_000)
        rss = dict(zip((1_000, 10_000), (_extract(envs["postgresql"], n, warm_up=True)["peak_kib"] for n in sizes),
                       strict=True))
        figures["extraction_peak_rss_kib"].append((rss[10_000], rss[1_000]))

    def median_pair(name: str) -> tuple[float, ...]:
        rows = figures[name]
        return tuple(statistics.median(row[i] for row in rows) for i in range(len(rows[0])))

    def ratio_of(name: str) -> float:
        # The median of the rounds' own ratios: each compares two figures taken side by side.
        return statistics.median(row[0] / row[1] for row in figures[name])

    ratios = {
        "append_vs_floor": "append_per_s",
        "page_vs_floor": "page_per_s",
        "batch_append_vs_multirow_insert": "batch_messages_per_s",
        "openai_session_vs_sqlalchemy": "openai_turns_per_s",
        "langgraph_vs_postgres_saver": "langgraph_runs_per_s",
        "extraction_peak_rss_10k_vs_1k": "extraction_peak_rss_kib",
    }
    values = {name: ratio_of(source) for name, source in ratios.items() if figures[source]}
    for name in ("context_ms", "extraction_end_to_end_floors_per_s"):
        if figures[name]:
            values["context_p50_ms_10k" if name == "context_ms" else name] = median_pair(name)[0]
    for kind in kinds:
        for name, source in (("deep_page_vs_first", "deep_page_ms"), ("memory_list_q_100k_vs_10k", "memory_list_q_p95_ms")):
            if figures[f"{source}[{kind}]"]:
                values[f"{name}[{kind}]"] = ratio_of(f"{source}[{kind}]")
        if figures[f"extraction_floors_per_s[{kind}]"]:
            values[f"extraction_floors_per_s[{kind}]"] = median_pair(f"extraction_floors_per_s[{kind}]")[0]

    print()
    for goal, (op, target) in GOALS.items():
        names = [f"{goal}[sqlite]", f"{goal}[postgresql]"] if goal in BOTH else [goal]
        for name in names:
            if name not in values:
                continue
            value = values[name]
            shown = f"{value:.0f}" if value >= 100 else f"{value:.2f}"
            print(f"ratio {name} {shown} {op} {target}" if op else f"ratio {name} {shown} (no goal)")

    print()
    absolute = [
        ("append_per_s", "append req/s", "floor insert req/s"),
        ("page_per_s", "GET 20 messages req/s (server-bound)", "floor view req/s"),
        ("batch_messages_per_s", "batch-append messages/s", "100-row INSERT+COMMIT rows/s"),
        ("openai_turns_per_s", "OpenAI session turns/s", "SQLAlchemySession (asyncpg) turns/s"),
        ("langgraph_runs_per_s", "LangGraph 10-step runs/s", "PostgresSaver runs/s"),
        ("deep_page_ms[postgresql]", "deep page ms [postgresql]", "first page ms"),
        ("deep_page_ms[sqlite]", "deep page ms [sqlite]", "first page ms"),
        ("memory_list_q_p95_ms[postgresql]", "q list p95 ms 100k [postgresql]", "10k"),
        ("memory_list_q_p95_ms[sqlite]", "q list p95 ms 100k [sqlite]", "10k"),
        ("extraction_peak_rss_kib", "extraction peak RSS KiB 10k", "1k"),
    ]
    for name, left, right in absolute:
        if figures[name]:
            a, b = median_pair(name)
            print(f"{left}: {a:.1f}   {right}: {b:.1f}")
    if figures["context_ms"]:
        print(f"context p50 ms (10,000 memories, 10,000 messages, indexed, dense on, {seed.get('ctx_entries')} "
              f"entries with vectors): {median_pair('context_ms')[0]:.1f}")
    load = os.getloadavg()
    print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
