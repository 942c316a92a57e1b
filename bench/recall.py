"""Evidence recall of context assembly, measured on the committed corpus
(bench/recall_corpus/*.json: long multi-session dialogs, questions with the
turns that answer them).

What it does, end to end, against the real service:

1. Starts the service on a database of its own: a SQLite file in a fresh
   temporary MEMORY_VAR_DIR with the embedded file-system Celery broker
   (default), or `--database postgresql`: database `bench_recall` (dropped and
   re-created) with Redis DBs BENCH_REDIS_DB and the next (13/14 by default).
   gunicorn (as `make run`) on a free loopback port; workspace and API key
   through manage.py's commands.
2. Ingests every dialog through `POST /v1/conversations/{cid}/messages`, one
   conversation per dialog with its `user_id`, each turn's session and time in
   the message metadata, keeping turn -> message id.
3. Starts one Celery worker (after ingestion, so the extraction batches are the
   same on every run; `--live-worker` runs it during ingestion instead) and
   waits until no memory job is pending or running, every floor of every
   conversation is processed and every recall entry has its vector, queueing
   the tail's extraction if it was left below the thresholds. Extraction reads
   `--batch-floors` floors per batch (default 6, the extraction threshold: the
   batches a conversation at a human pace gets; the service's catch-up batch
   is 50). Automatic compaction is held back (MEMORY_COMPACT_MIN_MICROS) so
   `service` measures before compaction.
4. For every question and budget B, calls `POST /v1/conversations/{cid}/context`
   with {"query", "memory_token_budget": B, "max_messages": 10, "strategy"} and
   scores evidence recall: per question, the share of its evidence messages that
   the context covers, averaged. Covered: the ids of the recent-message window
   (`messages[].id`), and for each `memory.injected` entry its `sources`
   (message ids) and `source_message_id` (passages). An entry that names
   neither is looked up (`GET /v1/memories/{id}`) and credited with its
   `sources`, `source_message_id`, its floor (`source_floor_id`) or, for a floor
   scope, that message. Coverage ranges (`coverage_*_floor_no`) are not credited:
   a summary of fifty turns does not hold each turn's evidence.
5. Forces a compaction of every scope (`POST /v1/memory_scopes/compact`), waits
   for the jobs, and measures the default strategy again.

Printed figures, one per line, `recall <variant>@<budget> <value>`:
  bm25                 Okapi BM25 over the raw turns (the baseline, computed
                       here), top turns packed into the same budget by the
                       service's tokenizer, plus the same 10-message window
  service              the default strategy
  strict               `service`, but an evidence message counts only where its
                       own text (client prefix removed) appears in the returned
                       context text (system text and messages)
  service-<strategy>   each strategy named explicitly
  compacted            the default strategy after the compaction pass
and `recall service@1000[<category>] <value>` per question category, bm25,
service and strict @1000 over the evidence turns that share no word with
their question (`no-shared-word`: only a bridge finds them), then
bm25 and service @1000 on the tuning split and the held-out split (every
third question of each dialog, see `held_out`), overall and multi-hop.
`--sweep` scores settings on both splits first and keeps the tuning split's
best (`sweep <SETTING>=<value> ...` lines).

    .venv/bin/python bench/recall.py [--quick] [--budgets 500,1000,2000]
        [--dialogs owen-rosa,priya-assistant] [--database sqlite|postgresql]
        [--batch-floors 6] [--live-worker] [--keep] [--dump results.jsonl]

Environment for PostgreSQL: PG_URL (server, default
postgres://postgres@127.0.0.1:5432), REDIS_URL (default redis://127.0.0.1:6379),
BENCH_REDIS_DB (default 13). Traffic goes only to 127.0.0.1. A few minutes on
2 cores; `--quick` scores a quarter of the questions.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "bench" / "recall_corpus"
PY = sys.executable
BIN = Path(PY).parent
sys.path.insert(0, str(ROOT))

from memories.llm.tokens import count_tokens  # noqa: E402  (the service's own tokenizer, for the baseline's budget)

DB_NAME = "bench_recall"
STRATEGIES = ("importance", "balanced", "dual-summary")
CATEGORIES = ("single-hop", "multi-hop", "temporal", "updated-fact", "cross-language")
# Settings a sweep may set (`--sweep`): chosen on the tuning split, reported on both.
SWEPT = ("RECALL_RRF_K", "RECALL_DENSE_MARGIN", "RECALL_EXPANSION_WEIGHT")


def held_out(question: dict) -> bool:
    """A third of each dialog's questions (every third by number), never used
    to choose a setting: the figures a choice is judged by."""
    return int(question["id"].rsplit("q", 1)[-1]) % 3 == 0
# The recent-message window asked of the service, and given to the baseline too.
WINDOW = 10
# Context calls in flight: gunicorn serves 2 workers x 4 threads on 2 cores;
# more than this only queues.
PARALLEL = 4
PIPELINE_TIMEOUT = 20 * 60
# Held out of the environment handed to the service: the benchmark chooses
# its own database, broker and cache.
OWN_SETTINGS = ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "SQLITE_PATH", "MEMORY_VAR_DIR", "CELERY_TASK_ALWAYS_EAGER")


def log(message: str) -> None:
    print(message, flush=True)


# --- The service under test ---------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    """gunicorn + one Celery worker on a database of the benchmark's own."""

    def __init__(self, *, database: str, keep: bool, batch_floors: int) -> None:
        self.database = database
        self.keep = keep
        self.var = Path(tempfile.mkdtemp(prefix="recall-bench-"))
        self.procs: dict[str, subprocess.Popen] = {}
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if k not in OWN_SETTINGS}
        env.update({
            "MEMORY_VAR_DIR": str(self.var),
            "DJANGO_SETTINGS_MODULE": "memory_project.settings",
            "LOG_LEVEL": "WARNING",
            "API_RATE_LIMIT": "1000000/min",
            # Compaction only when the benchmark asks for it (the `compacted` pass).
            "MEMORY_COMPACT_MIN_MICROS": "1000000",
            "MEMORY_EXTRACT_BATCH_FLOORS": str(batch_floors),
        })
        if database == "postgresql":
            pg = os.environ.get("PG_URL", "postgres://postgres@127.0.0.1:5432").rstrip("/")
            redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379").rstrip("/")
            db = int(os.environ.get("BENCH_REDIS_DB", "13"))
            env.update({
                "DATABASE_URL": f"{pg}/{DB_NAME}",
                "SECRET_KEY": "bench-only-secret-key-not-for-production",
                "CELERY_BROKER_URL": f"{redis_url}/{db}",
                "CACHE_URL": f"{redis_url}/{db + 1}",
            })
        else:
            env["SQLITE_PATH"] = str(self.var / "recall.sqlite3")
        self.env = env

    def _manage(self, *args: str) -> str:
        done = subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stderr[-2000:]}")
        return done.stdout

    def prepare(self) -> str:
        """A fresh database, migrated, with a workspace and an API key (returned)."""
        if self.database == "postgresql":
            import psycopg
            import redis

            admin = self.env["DATABASE_URL"].rsplit("/", 1)[0] + "/postgres"
            with psycopg.connect(admin.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
                conn.execute(f'CREATE DATABASE "{DB_NAME}"')
            for url in (self.env["CELERY_BROKER_URL"], self.env["CACHE_URL"]):
                redis.Redis.from_url(url).flushdb()
        self._manage("migrate", "--noinput", "-v", "0")
        self._manage("create_workspace", "Recall benchmark", "--slug", "recall-bench")
        return self._manage("create_api_key", "recall-bench", "--name", "recall-bench").strip().splitlines()[-1]

    def _spawn(self, name: str, cmd: list[str]) -> None:
        out = open(self.var / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        self.procs[name] = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                            start_new_session=True)

    def start_web(self) -> None:
        self._spawn("gunicorn", [str(BIN / "gunicorn"), "memory_project.wsgi", "--bind", f"127.0.0.1:{self.port}",
                                 "--workers", "2", "--threads", "4", "--timeout", "120"])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            self.check_alive()
            try:
                if httpx.get(f"{self.base}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise RuntimeError("gunicorn did not answer /healthz within 60 s")

    def start_worker(self) -> None:
        if "celery" not in self.procs:
            self._spawn("celery", [str(BIN / "celery"), "-A", "memory_project", "worker", "--concurrency", "1",
                                   "-l", "WARNING", "--without-gossip", "--without-mingle", "--without-heartbeat"])

    def restart_web(self, overrides: dict[str, str]) -> None:
        """gunicorn again, with these settings on top (a sweep's point)."""
        proc = self.procs.pop("gunicorn")
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        base = {k: v for k, v in self.env.items() if k not in SWEPT}
        self.env = {**base, **overrides}
        self.start_web()

    def check_alive(self) -> None:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                tail = (self.var / f"{name}.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{tail}")

    def enqueue_extract(self, scope_id: str) -> None:
        """The idle path's extraction of a scope's remaining floors, queued now
        rather than after the idle delay."""
        code = (
            "import django; django.setup()\n"
            "from accounts.models import Workspace\n"
            "from memories.services.jobs import memory_job_enqueue\n"
            "memory_job_enqueue(workspace=Workspace.objects.get(slug='recall-bench'), kind='extract', "
            f"scope='branch', scope_id={scope_id!r})\n"
        )
        done = subprocess.run([PY, "-c", code], cwd=ROOT, env=self.env, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(done.stderr[-1000:])

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if self.database == "postgresql":
            try:
                import psycopg

                admin = self.env["DATABASE_URL"].rsplit("/", 1)[0] + "/postgres"
                import redis

                with psycopg.connect(admin.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
                for url in (self.env["CELERY_BROKER_URL"], self.env["CACHE_URL"]):
                    redis.Redis.from_url(url).flushdb()
            except Exception as exc:  # noqa: BLE001 - cleanup: report and go on
                log(f"could not drop {DB_NAME} or empty its Redis databases: {exc}")
        if self.keep:
            log(f"kept {self.var}")
        else:
            shutil.rmtree(self.var, ignore_errors=True)


class Api:
    def __init__(self, base: str, key: str) -> None:
        self.http = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=120,
                                 limits=httpx.Limits(max_connections=PARALLEL * 2))

    def call(self, method: str, path: str, *, ok: tuple[int, ...] = (200, 201, 202), **kwargs) -> dict:
        for attempt in range(5):
            try:
                response = self.http.request(method, path, **kwargs)
            except httpx.TransportError:
                # A kept-alive connection to a gunicorn the sweep restarted.
                if attempt == 4:
                    raise
                time.sleep(0.5 * (attempt + 1))
                continue
            if response.status_code in ok:
                return response.json() if response.content else {}
            if response.status_code in (429, 502, 503) or (response.status_code >= 500 and attempt < 2):
                time.sleep(0.5 * (attempt + 1))
                continue
            break
        raise RuntimeError(f"{method} {path} -> {response.status_code}: {response.text[:500]}")

    def total(self, path: str, **params: Any) -> int:
        return int(self.call("GET", path, params={**params, "limit": 1})["meta"]["total"])

    def pages(self, path: str, **params: Any) -> list[dict]:
        rows: list[dict] = []
        while True:
            body = self.call("GET", path, params={**params, "limit": 100, "offset": len(rows)})
            rows += body["data"]
            if not body["data"] or len(rows) >= body["meta"]["total"]:
                return rows


# --- Corpus and ingestion ----------------------------------------------------------------


def load_dialogs(names: list[str] | None) -> list[dict]:
    paths = sorted(CORPUS.glob("*.json"))
    if names:
        wanted = {n.removesuffix(".json") for n in names}
        paths = [p for p in paths if p.stem in wanted]
        missing = wanted - {p.stem for p in paths}
        if missing:
            raise SystemExit(f"no dialog named {', '.join(sorted(missing))} in {CORPUS}")
    return [json.loads(p.read_text(encoding="utf-8")) for p in paths]


def ingest(api: Api, dialog: dict) -> list[str]:
    """One conversation per dialog; returns the message id of each turn."""
    cid = dialog["id"]
    api.call("POST", "/v1/conversations", json={"conversation_id": cid, "user_id": dialog["user_id"],
                                                "metadata": {"title": dialog["title"]}})
    ids = []
    for turn in dialog["turns"]:
        body = api.call("POST", f"/v1/conversations/{cid}/messages",
                        headers={"Idempotency-Key": f"{cid}:{turn['index']}"},
                        json={"role": turn["role"], "content": turn["content"],
                              "metadata": {"session": turn["session"], "timestamp": turn["time"], "speaker": turn["speaker"]}})
        ids.append(body["data"]["id"])
    return ids


def branch_scope_id(cid: str) -> str:
    return json.dumps([cid, "main"], ensure_ascii=False, separators=(",", ":"))


def wait_pipeline(api: Api, service: Service, backlog: Backlog, floors: dict[str, int], *, what: str) -> None:
    """Until no job is pending or running, every conversation's floors are
    processed and every recall entry has its vector. Prints what it waits for."""
    started = time.monotonic()
    last_report = 0.0
    nudged: dict[str, float] = {}
    while True:
        service.check_alive()
        pending = api.total("/v1/memory_jobs", status="pending")
        running = api.total("/v1/memory_jobs", status="running")
        states = {s["scope_id"]: s for s in api.pages("/v1/memory_scopes", scope="branch")}
        behind = {}
        for cid, total in floors.items():
            state = states.get(branch_scope_id(cid), {})
            done = int(state.get("last_processed_floor_no") or 0)
            if done < total or int(state.get("pending_floors") or 0) > 0:
                behind[cid] = (done, total)
        vectors = backlog.embeddings_pending()
        elapsed = time.monotonic() - started
        if not pending and not running and not behind and not vectors:
            log(f"{what}: done in {elapsed:.1f}s")
            return
        if elapsed - last_report >= 10:
            processed = sum(min(floors[c], int(states.get(branch_scope_id(c), {}).get("last_processed_floor_no") or 0))
                            for c in floors)
            log(f"{what}: waiting for {running} running and {pending} pending memory jobs; "
                f"floors processed {processed}/{sum(floors.values())}; "
                f"recall entries without a vector {'n/a' if vectors is None else vectors} ({elapsed:.0f}s)")
            last_report = elapsed
        if not pending and not running:
            # Floors left below the extraction thresholds: the idle path's job, now.
            for cid, (done, total) in behind.items():
                if time.monotonic() - nudged.get(cid, -1e9) < 30:
                    continue
                nudged[cid] = time.monotonic()
                try:
                    service.enqueue_extract(branch_scope_id(cid))
                    log(f"{what}: {cid} stopped at floor {done}/{total}: queued the extraction of its tail")
                except RuntimeError as exc:
                    log(f"{what}: {cid} stopped at floor {done}/{total}: idle extraction not queued ({exc.splitlines()[-1]}), "
                        "asking for a rebuild")
                    api.call("POST", "/v1/memory_scopes/rebuild", json={"scope": "branch", "scope_id": branch_scope_id(cid)})
        if elapsed > PIPELINE_TIMEOUT:
            raise RuntimeError(f"{what}: pipeline not done after {PIPELINE_TIMEOUT}s: {behind}")
        time.sleep(1.0)


class Backlog:
    """Work the pipeline does outside memory jobs: vectors of recall entries,
    computed by Celery tasks that the jobs API does not list. Read from the
    service's own tables, in this process, on the benchmark's database; None
    where the service has no such entries (nothing to wait for)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.ready = False
        self.env = env

    def embeddings_pending(self) -> int | None:
        try:
            if not self.ready:
                os.environ.update(self.env)
                import django

                django.setup()
                self.ready = True
            from django.db import close_old_connections

            from memories.recall.embeddings import get_embedding_provider
            from memories.recall.models import RecallEntry

            close_old_connections()
            provider = get_embedding_provider()
            if provider is None:
                return 0
            return RecallEntry.objects.exclude(embedding_model=provider.name).count()
        except Exception:  # noqa: BLE001 - a service without recall entries or vectors
            return None


def report_failed_jobs(api: Api) -> None:
    failed = api.pages("/v1/memory_jobs", status="failed")
    for job in failed[:5]:
        log(f"  failed job {job['id']} ({job['kind']} {job['scope_id']}): {job.get('error')}")
    if failed:
        log(f"  {len(failed)} failed memory jobs")


# --- Scoring ---------------------------------------------------------------------------

_PREFIX = re.compile(r"^\[[^\]\n]{1,40}\]\s*[^:\n]{1,60}:\s*")
_SPACE = re.compile(r"\s+")


def plain(text: str) -> str:
    """Message text without a client prefix ("[7:31 pm] Nate: "), spaces collapsed."""
    return _SPACE.sub(" ", _PREFIX.sub("", text)).strip()


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content if isinstance(b, str | dict))
    if isinstance(content, dict):
        return str(content.get("text", ""))
    return ""


class SourceResolver:
    """Message ids a memory was made from, for injected entries that do not
    carry them: `GET /v1/memories/{id}`, cached (sources never change)."""

    def __init__(self, api: Api, floor_ids: dict[str, dict[int, str]]) -> None:
        self.api = api
        self.floor_ids = floor_ids
        self.cache: dict[str, set[str]] = {}
        self.lock = threading.Lock()
        self.lookups = 0

    def __call__(self, memory_id: str) -> set[str]:
        with self.lock:
            if memory_id in self.cache:
                return self.cache[memory_id]
        try:
            item = self.api.call("GET", f"/v1/memories/{memory_id}")
        except RuntimeError:
            item = {}
        item = item.get("data", item) if isinstance(item, dict) else {}
        found = _ids(item.get("sources")) | _ids(item.get("source_message_id"))
        floor = str(item.get("source_floor_id") or "")
        cid = _scope_conversation(item.get("scope"), item.get("scope_id"))
        if floor.isdigit() and cid in self.floor_ids:
            found |= {self.floor_ids[cid][int(floor)]} if int(floor) in self.floor_ids[cid] else set()
        if item.get("scope") == "floor" and isinstance(item.get("scope_id"), str):
            found.add(item["scope_id"])
        with self.lock:
            self.cache[memory_id] = found
            self.lookups += 1
        return found


def _ids(value: Any) -> set[str]:
    if isinstance(value, str) and value:
        return {value}
    if isinstance(value, list):
        out: set[str] = set()
        for v in value:
            if isinstance(v, dict):
                v = v.get("message_id") or v.get("id")
            if isinstance(v, str) and v:
                out.add(v)
        return out
    return set()


def _scope_conversation(scope: Any, scope_id: Any) -> str | None:
    if scope == "chat" and isinstance(scope_id, str):
        return scope_id
    if scope == "branch" and isinstance(scope_id, str):
        try:
            return json.loads(scope_id)[0]
        except (ValueError, IndexError, TypeError):
            return None
    return None


def covered_ids(body: dict, resolve: SourceResolver) -> set[str]:
    covered = {m["id"] for m in body.get("messages") or [] if isinstance(m, dict) and isinstance(m.get("id"), str)}
    for entry in (body.get("memory") or {}).get("injected") or []:
        named = "sources" in entry or "source_message_id" in entry
        covered |= _ids(entry.get("sources")) | _ids(entry.get("source_message_id"))
        if not named and entry.get("kind") != "passage" and isinstance(entry.get("id"), str):
            covered |= resolve(entry["id"])
    return covered


def context_text(body: dict) -> str:
    parts = [body.get("system") or ""]
    parts += [content_text(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict)]
    return _SPACE.sub(" ", "\n".join(parts))


# --- The baseline: Okapi BM25 over the raw turns ------------------------------------------

STOPWORDS = frozenset(re.split(r"\s+", """a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves i'm i've i'll it's that's don't can't let's also got get"""))
_ZH_STOP = frozenset("的了是我你他她它们在和也就都而及与着吗呢吧啊呀嗯哦个这那有没不")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9'@._\-]*[a-z0-9]|[a-z0-9]|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_SUFFIXES = (("ational", "ate"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("ization", "ize"),
             ("ies", "y"), ("ing", ""), ("edly", ""), ("ed", ""), ("ly", ""), ("es", ""), ("s", ""))


def _stem(word: str) -> str:
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + replacement
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]  # "running" -> "runn" -> "run"
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]  # "race", "races", "raced", "racing" -> "rac"
    return word


def bm25_terms(text: str) -> list[str]:
    """English words (stopwords out, light suffix stripping) and CJK character
    bigrams (a lone character where a run has one)."""
    out = []
    for token in _TOKEN.findall(text.lower()):
        if "\u3400" <= token[0] <= "\ufaff":
            chars = [c for c in token if c not in _ZH_STOP] if len(token) > 1 else [token]
            out += [a + b for a, b in zip(chars, chars[1:], strict=False)] or chars
        elif token not in STOPWORDS:
            out.append(_stem(token.removesuffix("'s").strip("'")))
    return out


class BM25:
    def __init__(self, documents: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.docs = [Counter(bm25_terms(d)) for d in documents]
        self.lengths = [sum(c.values()) for c in self.docs]
        self.avg = sum(self.lengths) / max(1, len(self.lengths))
        df = Counter(term for c in self.docs for term in c)
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def rank(self, query: str) -> list[tuple[float, int]]:
        terms = set(bm25_terms(query))
        scored = []
        for i, counts in enumerate(self.docs):
            score = 0.0
            norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg)
            for t in terms:
                tf = counts.get(t)
                if tf:
                    score += self.idf[t] * tf * (self.k1 + 1) / (tf + norm)
            if score > 0:
                scored.append((score, i))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return scored


def bm25_covered(index: BM25, turns: list[dict], ids: list[str], query: str, budget: int, tokens: list[int]) -> set[str]:
    chosen: set[str] = {ids[i] for i in range(max(0, len(turns) - WINDOW), len(turns))}
    left = budget
    for _, i in index.rank(query):
        if tokens[i] <= left:
            chosen.add(ids[i])
            left -= tokens[i]
        if left <= 0:
            break
    return chosen


# --- The measurement ------------------------------------------------------------------


def select_questions(dialog: dict, quick: bool) -> list[dict]:
    if not quick:
        return dialog["questions"]
    seen: Counter = Counter()
    picked = []
    for q in dialog["questions"]:
        if seen[q["category"]] % 4 == 0:
            picked.append(q)
        seen[q["category"]] += 1
    return picked


def recall_of(evidence: list[str], covered: set[str]) -> float:
    return sum(e in covered for e in evidence) / len(evidence)


def strict_of(evidence_texts: list[str], text: str) -> float:
    return sum(t in text for t in evidence_texts) / len(evidence_texts)


def measure(api: Api, jobs: list[tuple], budgets: list[int], strategies: list[str | None],
            resolve: SourceResolver) -> dict[tuple[str | None, int], list[dict]]:
    """Context for every (question, budget, strategy). `None` is the default strategy."""
    def one(job, budget, strategy):
        cid, question = job[0], job[1]
        payload: dict[str, Any] = {"query": question["question"], "memory_token_budget": budget, "max_messages": WINDOW}
        if strategy is not None:
            payload["strategy"] = strategy
        body = api.call("POST", f"/v1/conversations/{cid}/context", json=payload)["data"]
        memory = body.get("memory") or {}
        return {"covered": covered_ids(body, resolve), "text": context_text(body), "strategy": memory.get("strategy"),
                "memory_tokens": (body.get("usage") or {}).get("memory_tokens", 0), "elapsed_ms": body.get("elapsed_ms"),
                "injected": [{k: e.get(k) for k in ("kind", "type", "summary_tier", "id", "source_message_id", "floor_no")
                              if e.get(k) is not None} | {"sources": list(e.get("sources") or [])}
                             for e in memory.get("injected") or []]}

    tasks = [(job, budget, strategy) for strategy in strategies for budget in budgets for job in jobs]
    with ThreadPoolExecutor(PARALLEL) as pool:
        results = list(pool.map(lambda t: one(*t), tasks))
    out: dict[tuple[str | None, int], list[dict]] = defaultdict(list)
    for (_, budget, strategy), result in zip(tasks, results, strict=True):
        out[(strategy, budget)].append(result)
    return out


def sweep(api: Api, service: Service, jobs: list[tuple], resolve: SourceResolver, spec: str) -> dict[str, str]:
    """Each value of each swept setting scored @500 and @1000 with the
    default strategy on both splits; returns the best value of each on the
    tuning split (the mean of the two budgets; ties to the earlier value)."""
    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    chosen: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        name, _, values = part.partition("=")
        if name not in SWEPT:
            raise SystemExit(f"--sweep: {name} is not one of {', '.join(SWEPT)}")
        best: tuple[float, str] | None = None
        for value in values.split(","):
            service.restart_web({name: value})
            measured = measure(api, jobs, [500, 1000], [None], resolve)
            figures = {}
            for budget in (500, 1000):
                scored = measured[(None, budget)]
                for split, keep in (("tuning", False), ("held-out", True)):
                    figures[(budget, split)] = mean([recall_of(j[2], r["covered"])
                                                     for j, r in zip(jobs, scored, strict=True) if held_out(j[1]) is keep])
            log(f"sweep {name}={value} " + " ".join(f"service@{b}[{split}] {v:.3f}" for (b, split), v in figures.items()))
            tuning = (figures[(500, "tuning")] + figures[(1000, "tuning")]) / 2
            if best is None or tuning > best[0]:
                best = (tuning, value)
        chosen[name] = best[1]
    return chosen


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description="Evidence recall of context assembly on the recall corpus.")
    parser.add_argument("--dialogs", help="comma-separated dialog ids (default: every file in bench/recall_corpus)")
    parser.add_argument("--budgets", default="500,1000,2000", help="memory token budgets (default 500,1000,2000)")
    parser.add_argument("--quick", action="store_true", help="a quarter of the questions, every category kept")
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--live-worker", action="store_true", help="run the Celery worker during ingestion")
    parser.add_argument("--batch-floors", type=int, default=6,
                        help="floors per extraction batch (default 6, the extraction threshold, as a conversation "
                             "at a human pace is extracted)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (database, logs)")
    parser.add_argument("--dump", type=Path, help="write per-question results (default strategy, before and after "
                                                   "compaction, every budget) to this JSON-lines file")
    parser.add_argument("--sweep", default="",
                        help="settings to choose on the tuning split before measuring, e.g. "
                             "'RECALL_RRF_K=5,10,20,60;RECALL_DENSE_MARGIN=0.04,0.08,0.12': each value scored "
                             "@1000 on both splits (others at their defaults), then the best on the tuning split "
                             "of each is kept for the measurement")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    dialogs = load_dialogs(args.dialogs.split(",") if args.dialogs else None)
    started = time.monotonic()
    timings: dict[str, float] = {}

    service = Service(database=args.database, keep=args.keep, batch_floors=args.batch_floors)
    backlog = Backlog(service.env)
    # SIGTERM ends the run like Ctrl-C does: through `finally`, which stops the processes.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        log(f"database: {args.database}; service directory {service.var}; extraction batches of {args.batch_floors} floors")
        key = service.prepare()
        service.start_web()
        if args.live_worker:
            service.start_worker()
        api = Api(service.base, key)
        log(f"gunicorn on {service.base}; ingesting {len(dialogs)} dialogs "
            f"({sum(len(d['turns']) for d in dialogs)} turns) ...")
        t = time.monotonic()
        with ThreadPoolExecutor(len(dialogs)) as pool:
            message_ids = dict(zip([d["id"] for d in dialogs], pool.map(lambda d: ingest(api, d), dialogs), strict=True))
        timings["ingest"] = time.monotonic() - t
        log(f"ingested in {timings['ingest']:.1f}s")

        t = time.monotonic()
        service.start_worker()
        floors = {d["id"]: len(d["turns"]) for d in dialogs}
        wait_pipeline(api, service, backlog, floors, what="pipeline")
        timings["pipeline"] = time.monotonic() - t
        report_failed_jobs(api)
        kinds: Counter = Counter()
        for item in api.pages("/v1/memories"):
            kinds[f"{item['scope']} {item['type']}" + (f"/{item['summary_tier']}" if item.get("summary_tier") else "")] += 1
        log(f"memories: {sum(kinds.values())} ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})")

        floor_ids = {cid: {n + 1: mid for n, mid in enumerate(ids)} for cid, ids in message_ids.items()}
        resolve = SourceResolver(api, floor_ids)
        jobs = []
        for d in dialogs:
            ids = message_ids[d["id"]]
            for q in select_questions(d, args.quick):
                evidence = [ids[i] for i in q["evidence"]]
                texts = [plain(d["turns"][i]["content"]) for i in q["evidence"]]
                jobs.append((d["id"], q, evidence, texts))
        log(f"questions: {len(jobs)}; budgets {budgets}; {len(STRATEGIES) + 2} variants through the service")

        t = time.monotonic()
        if args.sweep:
            chosen = sweep(api, service, jobs, resolve, args.sweep)
            log("sweep: measuring with " + ", ".join(f"{k}={v}" for k, v in chosen.items()))
            service.restart_web(chosen)
        results = measure(api, jobs, budgets, [None], resolve)
        default = results[(None, budgets[0])][0]["strategy"] or "balanced"
        others = [s for s in STRATEGIES if s != default]
        results.update(measure(api, jobs, budgets, others, resolve))
        for budget in budgets:
            results[(default, budget)] = results[(None, budget)]
        timings["queries"] = time.monotonic() - t

        t = time.monotonic()
        scopes = [s for s in api.pages("/v1/memory_scopes") if s.get("item_count") or s.get("micro_count")]
        log(f"compaction: {len(scopes)} scopes ...")
        for s in scopes:
            try:
                api.call("POST", "/v1/memory_scopes/compact", json={"scope": s["scope"], "scope_id": s["scope_id"]})
            except RuntimeError as exc:
                log(f"  {s['scope']} {s['scope_id']}: not compacted ({exc})")
        wait_pipeline(api, service, backlog, floors, what="compaction")
        for job in api.pages("/v1/memory_jobs", kind="compact"):
            log(f"  compact {job['scope']} {job['scope_id']}: {job['status']} {json.dumps(job.get('result') or {})}")
        compacted = measure(api, jobs, budgets, [None], resolve)
        timings["compaction"] = time.monotonic() - t

        # The baseline.
        t = time.monotonic()
        baseline: dict[int, list[set[str]]] = defaultdict(list)
        indexes = {d["id"]: (BM25([x["content"] for x in d["turns"]]), d, [count_tokens(x["content"]) for x in d["turns"]])
                   for d in dialogs}
        for cid, q, _, _ in jobs:
            index, d, tokens = indexes[cid]
            for budget in budgets:
                baseline[budget].append(bm25_covered(index, d["turns"], message_ids[cid], q["question"], budget, tokens))
        timings["bm25"] = time.monotonic() - t
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        service.stop()

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    log("")
    lines = []
    for budget in budgets:
        lines.append((f"bm25@{budget}", mean([recall_of(j[2], c) for j, c in zip(jobs, baseline[budget], strict=True)])))
    for budget in budgets:
        lines.append((f"service@{budget}", mean([recall_of(j[2], r["covered"]) for j, r in zip(jobs, results[(None, budget)], strict=True)])))
    for budget in budgets:
        lines.append((f"strict@{budget}", mean([strict_of(j[3], r["text"]) for j, r in zip(jobs, results[(None, budget)], strict=True)])))
    for strategy in STRATEGIES:
        for budget in budgets:
            lines.append((f"service-{strategy}@{budget}",
                          mean([recall_of(j[2], r["covered"]) for j, r in zip(jobs, results[(strategy, budget)], strict=True)])))
    for budget in budgets:
        lines.append((f"compacted@{budget}", mean([recall_of(j[2], r["covered"]) for j, r in zip(jobs, compacted[(None, budget)], strict=True)])))
    if 1000 in budgets:
        for category in CATEGORIES:
            picked = [(j, r) for j, r in zip(jobs, results[(None, 1000)], strict=True) if j[1]["category"] == category]
            if picked:
                lines.append((f"service@1000[{category}]", mean([recall_of(j[2], r["covered"]) for j, r in picked])))
    if 1000 in budgets:
        # Evidence that shares no word with its question (after stopwords
        # and stemming): only a bridge (meaning, or a link through another
        # turn) finds it. Recall over those evidence turns alone.
        unshared = []
        for n, (_, q, evidence, texts) in enumerate(jobs):
            asked = set(bm25_terms(q["question"]))
            alone = [m for m, text in zip(evidence, texts, strict=True) if not asked & set(bm25_terms(text))]
            if alone:
                unshared.append((n, alone))
        if unshared:
            lines.append((f"bm25@1000[no-shared-word,{len(unshared)}q]",
                          mean([recall_of(alone, baseline[1000][n]) for n, alone in unshared])))
            lines.append((f"service@1000[no-shared-word,{len(unshared)}q]",
                          mean([recall_of(alone, results[(None, 1000)][n]["covered"]) for n, alone in unshared])))
            lines.append((f"strict@1000[no-shared-word,{len(unshared)}q]",
                          mean([strict_of([jobs[n][3][jobs[n][2].index(m)] for m in alone], results[(None, 1000)][n]["text"])
                                for n, alone in unshared])))
    if 1000 in budgets:
        for split, keep in (("tuning", False), ("held-out", True)):
            picked = [n for n, j in enumerate(jobs) if held_out(j[1]) is keep]
            lines.append((f"bm25@1000[{split}]", mean([recall_of(jobs[n][2], baseline[1000][n]) for n in picked])))
            lines.append((f"service@1000[{split}]",
                          mean([recall_of(jobs[n][2], results[(None, 1000)][n]["covered"]) for n in picked])))
            multi = [n for n in picked if jobs[n][1]["category"] == "multi-hop"]
            lines.append((f"service@1000[multi-hop,{split}]",
                          mean([recall_of(jobs[n][2], results[(None, 1000)][n]["covered"]) for n in multi])))
    for name, value in lines:
        log(f"recall {name} {value:.3f}")
    if args.dump:
        with args.dump.open("w", encoding="utf-8") as out:
            for n, (cid, q, evidence, texts) in enumerate(jobs):
                row = {"dialog": cid, **{k: q[k] for k in ("id", "category", "question", "answer", "evidence")}}
                for budget in budgets:
                    for label, table in (("service", results), ("compacted", compacted)):
                        r = table[(None, budget)][n]
                        row[f"{label}@{budget}"] = {"recall": recall_of(evidence, r["covered"]),
                                                    "strict": strict_of(texts, r["text"]), "injected": r["injected"]}
                    row[f"bm25@{budget}"] = recall_of(evidence, baseline[budget][n])
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        log(f"per-question results in {args.dump}")
    calls = {id(rs): rs for rs in [*results.values(), *compacted.values()]}  # the default strategy is listed twice
    served = sorted(r["elapsed_ms"] for rs in calls.values() for r in rs if r["elapsed_ms"] is not None)
    if served:
        log(f"context assembly (server elapsed_ms): p50 {served[len(served) // 2]:.0f} ms, "
            f"p90 {served[int(len(served) * 0.9)]:.0f} ms over {len(served)} calls")
    used = [r["memory_tokens"] for key, rs in results.items() if key[0] is None for r in rs]
    log(f"questions {len(jobs)} in {len(dialogs)} dialogs; default strategy {default}; "
        f"memory lookups for sources {resolve.lookups}; mean memory tokens used {mean(used):.0f}")
    log("time " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items()) + f", total {time.monotonic() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
