"""`bench/load.py --hosts 2`: the mixed load through several web hosts, and
the guarantees that must hold across them.

Each web host is a network namespace of this run's own making (see
`web_hosts`) running gunicorn (the production configuration, 2 workers x 4
threads) and a Celery worker; all share one PostgreSQL (through its Unix
socket) and one Redis (a server this run starts on a Unix socket), and
recall vectors are on (the offline model). Clients send each request to the
next host in turn, as a round-robin load balancer would.

After the mixed load, checks that state lives in the shared services and not
in a host, each with requests spread over the hosts at once:

- the 10,000-message cap: 30 appends race for a conversation's last 10 places;
- idempotency: 20 appends with one Idempotency-Key store one message;
- optimistic concurrency: 20 updates of one memory at version 1, one wins;
- key revocation: a key revoked (in the database) answers 401 on every host;
- rate limits: a key's burst past its limit is refused past the limit, in
  total over the hosts;
- the dense cache: a global memory written through one host, once its vector
  is written, is found by meaning through every host on the next calls.

Then nothing lost: every acknowledged append and memory write is in the
database. Prints requests, errors, p50/p99 (all, per operation, per host),
and the resident memory of every web and Celery process at the start and
the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import subprocess
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from urllib.parse import quote

import httpx

from bench.web_hosts import available, redis_on_socket, web_hosts

ROOT = Path(__file__).resolve().parents[1]
DB_NAME = "bench_load_hosts"
PORT = 8000
# Per key and minute: above a mixed-load client's pace (one request at a
# time), low enough that a burst passes it within seconds on a busy machine.
RATE_LIMIT = 300
CAP = 10_000
WORDS = ["tea", "coffee", "Berlin", "deadline", "invoice", "garden", "piano", "ticket", "report", "会议", "咖啡"]
DENSE_MEMORY = "我女儿下个月要去杭州参加钢琴比赛。"
DENSE_QUERY = "Where will my daughter's piano contest take place?"

PREPARE = """
import json, django
django.setup()
from accounts.services import workspace_create, api_key_create
from conversations.services import messages_append
from conversations.services.append import new_message
ws = workspace_create(name='Bench', slug='bench')
keys = [api_key_create(workspace=ws, name=f'client-{i}').raw_key for i in range(CLIENTS)]
special = {name: api_key_create(workspace=ws, name=name).raw_key for name in ('checks', 'revoked', 'rate')}
for start in range(0, CAP - 10, 100):
    messages_append(workspace=ws, external_id='capped', messages=[
        new_message(role='user', content=f'filler {start + i}') for i in range(min(100, CAP - 10 - start))])
# Its own workspace: the pipeline embeds a workspace's entries oldest first,
# and this one has no backlog in front of the memory the check writes.
dense = workspace_create(name='Dense', slug='dense')
special['dense'] = api_key_create(workspace=dense, name='dense').raw_key
special['dense_workspace'] = dense.pk
print(json.dumps({'workspace': ws.pk, 'keys': keys, **special}))
"""

# What a worker's embedding task runs, run directly: the check is about the
# web tier's cache of vectors, and two workers busy with the extraction of the
# capped conversation's 9,990 messages may reach the task only minutes later.
EMBED = """
import sys, django
django.setup()
from memories.recall.dense import recall_embed_pending
print(recall_embed_pending(workspace_id=sys.argv[1]))
"""

REVOKE = """
import sys, django
django.setup()
from accounts.models import ApiKey
from accounts.services import api_key_revoke
api_key_revoke(api_key=ApiKey.objects.get(workspace_id=sys.argv[1], name='revoked'))
"""


def _rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except FileNotFoundError:
        pass
    return 0.0


def _tree(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    children = [int(p) for p in out.split()]
    return children + [g for c in children for g in _tree(c)]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else 0.0


class Balancer:
    """Round robin over the hosts, one client per host per API key."""

    def __init__(self, bases: list[str]):
        self.bases = bases
        self.turn = 0

    def next(self) -> int:
        self.turn = (self.turn + 1) % len(self.bases)
        return self.turn


async def _mixed_client(n: int, key: str, bases: list[str], stop_at: float, stats, per_host, errors, acked) -> None:
    rng = random.Random(n)
    cid = f"bench-{n}"
    headers = {"Authorization": f"Bearer {key}"}
    clients = [httpx.AsyncClient(base_url=b, headers=headers, timeout=60) for b in bases]
    balancer = Balancer(bases)
    try:
        while time.monotonic() < stop_at:
            host = balancer.next()
            client = clients[host]
            roll = rng.random()
            word = rng.choice(WORDS)
            if roll < 0.35:
                op, call, ok = "append", client.post(f"/v1/conversations/{cid}/messages", json={
                    "role": rng.choice(["user", "assistant"]),
                    "content": f"I mentioned {word} again, number {rng.randint(1, 10**6)}."}), {201}
            elif roll < 0.55:
                op, call, ok = "read", client.get(f"/v1/conversations/{cid}/messages", params={"limit": 20}), {200, 404}
            elif roll < 0.70:
                op, call, ok = "memory_write", client.post("/v1/memories", json={
                    "scope": "chat", "scope_id": cid, "type": "fact",
                    "content": f"Likes {word} #{rng.randint(1, 10**6)}"}), {201}
            elif roll < 0.85:
                op, call, ok = "search", client.get("/v1/memories", params={"q": word, "limit": 10}), {200}
            else:
                op, call, ok = "context", client.post(f"/v1/conversations/{cid}/context",
                                                      json={"query": word, "max_messages": 20}), {200, 404}
            started = time.perf_counter()
            try:
                status = (await call).status_code
            except httpx.HTTPError as exc:
                status = exc.__class__.__name__
            elapsed = time.perf_counter() - started
            stats[op].append(elapsed)
            per_host[host].append(elapsed)
            if status not in ok:
                errors.append(f"{op} -> {status}")
            elif op in ("append", "memory_write"):
                acked[op] += 1
    finally:
        for c in clients:
            await c.aclose()


async def _mixed(keys, bases, seconds):
    stats, per_host, errors, acked = defaultdict(list), defaultdict(list), [], defaultdict(int)
    started = time.monotonic()
    await asyncio.gather(*(_mixed_client(n, k, bases, started + seconds, stats, per_host, errors, acked)
                           for n, k in enumerate(keys)))
    return stats, per_host, errors, acked, time.monotonic() - started


async def _spread(bases, key, requests):
    """Send `requests` ((method, path, json, headers) each) at once, the i-th
    to host i mod hosts. Returns (status, body) pairs in order."""
    clients = [httpx.AsyncClient(base_url=b, headers={"Authorization": f"Bearer {key}"}, timeout=60) for b in bases]
    try:
        async def one(i, method, path, body, headers):
            response = await clients[i % len(clients)].request(method, path, json=body, headers=headers or {})
            try:
                return response.status_code, response.json()
            except ValueError:
                return response.status_code, None
        return await asyncio.gather(*(one(i, *r) for i, r in enumerate(requests)))
    finally:
        for c in clients:
            await c.aclose()


def _embed_now(env, prepared) -> None:
    subprocess.run([env["PY"], "-c", EMBED, prepared["dense_workspace"]], cwd=ROOT, env=env, check=True,
                   capture_output=True)


def _dense_check(bases, prepared, db, check, env) -> None:
    key = prepared["dense"]
    # The dense cache: warm every worker, write, wait for the vector, ask again.
    asyncio.run(_spread(bases, key, [("POST", "/v1/conversations/dense/messages",
                                      {"role": "user", "content": "hello"}, None)]))
    # Global memories with their vectors first, so every worker holds the
    # scope when the new one arrives.
    asyncio.run(_spread(bases, key, [("POST", "/v1/memories", {"scope": "global", "type": "fact", "content": text},
                                      None) for text in ("The office opens at nine", "The user prefers aisle seats",
                                                         "The cat is called Snow")]))
    deadline = time.monotonic() + 60
    while db("SELECT 1 FROM memories_recallentry WHERE workspace_id = %s AND embedding_model = ''",
             [prepared["dense_workspace"]]) and time.monotonic() < deadline:
        time.sleep(0.5)
    _embed_now(env, prepared)
    ask = [("POST", "/v1/conversations/dense/context", {"query": DENSE_QUERY, "max_messages": 0}, None)] * 8
    warm = asyncio.run(_spread(bases, key, ask))
    [(status, body)] = asyncio.run(_spread(bases, key, [("POST", "/v1/memories", {
        "scope": "global", "type": "fact", "content": DENSE_MEMORY}, None)]))
    memory_id = body["data"]["id"]
    deadline = time.monotonic() + 60
    while not db("SELECT 1 FROM memories_recallentry WHERE memory_id = %s AND embedding_model <> ''", [memory_id]):
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)
    by = "the pipeline"
    if not db("SELECT 1 FROM memories_recallentry WHERE memory_id = %s AND embedding_model <> ''", [memory_id]):
        _embed_now(env, prepared)
        by = "the embedding task's function run directly (the workers had not reached it in 60 s)"
    embedded = bool(db("SELECT 1 FROM memories_recallentry WHERE memory_id = %s AND embedding_model <> ''",
                       [memory_id]))
    results = asyncio.run(_spread(bases, key, ask))
    found = [any(e["id"] == memory_id and e["score"].get("dense", 0) > 0 for e in b["data"]["memory"]["injected"])
             for s, b in results if s == 200]
    check("dense cache invalidation", embedded and all(s == 200 for s, _ in warm + results) and all(found)
          and len(found) == 8,
          f"found by meaning on {sum(found)} of {len(results)} calls; its vector written: {embedded}, by {by}")


def _checks(bases, prepared, env, db) -> list[str]:
    """Each guarantee across hosts; returns the failures."""
    failures: list[str] = []
    key = prepared["checks"]

    def check(name: str, held: bool, detail: str) -> None:
        print(f"check {name}: {'holds' if held else 'FAILED'} ({detail})", flush=True)
        if not held:
            failures.append(f"check {name} failed: {detail}")

    _dense_check(bases, prepared, db, check, env)

    # The 10,000-message cap.
    results = asyncio.run(_spread(bases, key, [("POST", "/v1/conversations/capped/messages",
                                               {"role": "user", "content": f"race {i}"}, None) for i in range(30)]))
    created = sum(1 for s, _ in results if s == 201)
    refused = sum(1 for s, b in results if s == 429 and b and b["error"]["type"] == "quota_exceeded_error")
    stored = db("SELECT message_count FROM conversations_conversation WHERE external_id = 'capped'")[0][0]
    check("message cap", created == 10 and refused == 20 and stored == CAP,
          f"{created} appended, {refused} refused, {stored} stored")

    # Idempotency.
    results = asyncio.run(_spread(bases, key, [("POST", "/v1/conversations/idem/messages",
                                               {"role": "user", "content": "once"}, {"Idempotency-Key": "same-key"})
                                              for _ in range(20)]))
    ids = {b["data"]["id"] for s, b in results if s in (200, 201)}
    stored = db("SELECT count(*) FROM conversations_message m JOIN conversations_conversation c "
                "ON c.id = m.conversation_id WHERE c.external_id = 'idem'")[0][0]
    check("idempotency", len(ids) == 1 and all(s in (200, 201) for s, _ in results) and stored == 1,
          f"statuses {sorted({s for s, _ in results})}, {len(ids)} message id(s), {stored} stored")

    # Optimistic concurrency.
    [(status, body)] = asyncio.run(_spread(bases, key, [("POST", "/v1/memories", {
        "scope": "global", "type": "fact", "content": "The office opens at nine"}, None)]))
    memory_id = body["data"]["id"]
    results = asyncio.run(_spread(bases, key, [("PATCH", f"/v1/memories/{memory_id}", {
        "content": f"The office opens at {i}", "expected_version": 1}, None) for i in range(20)]))
    won = sum(1 for s, _ in results if s == 200)
    lost = sum(1 for s, _ in results if s == 409)
    version = db("SELECT version FROM memories_memoryitem WHERE id = %s", [memory_id])[0][0]
    check("optimistic concurrency", won == 1 and lost == 19 and version == 2,
          f"{won} updated, {lost} refused with 409, version {version}")

    # Key revocation.
    revoked = prepared["revoked"]
    before = asyncio.run(_spread(bases, revoked, [("GET", "/v1/memories?limit=1", None, None)] * 8))
    subprocess.run([env["PY"], "-c", REVOKE, prepared["workspace"]], cwd=ROOT, env=env, check=True)
    after = asyncio.run(_spread(bases, revoked, [("GET", "/v1/memories?limit=1", None, None)] * 8))
    check("key revocation", all(s == 200 for s, _ in before) and all(s == 401 for s, _ in after),
          f"before {[s for s, _ in before]}, after {[s for s, _ in after]}")

    # Rate limits, in a window of their own: from the start of the next one.
    time.sleep(60 - time.time() % 60 + 0.5)
    window = int(time.time() // 60)
    burst = RATE_LIMIT + 60
    results = []
    for start in range(0, burst, 50):
        results += asyncio.run(_spread(bases, prepared["rate"],
                                       [("GET", "/v1/bench/floor/ping", None, None)] * min(50, burst - start)))
    same_window = int(time.time() // 60) == window
    allowed = sum(1 for s, _ in results if s == 200)
    limited = sum(1 for s, _ in results if s == 429)
    check("rate limit", allowed <= RATE_LIMIT and allowed + limited == burst and limited > 0 and same_window,
          f"{allowed} allowed, {limited} refused of {burst} (limit {RATE_LIMIT}/min, one window: {same_window})")

    return failures


def main_hosts(args) -> int:
    why = available()
    if why:
        print(f"two web hosts: {why}")
        return 1
    pg_socket = os.environ.get("PG_SOCKET_DIR", "/var/run/postgresql")
    with tempfile.TemporaryDirectory(prefix="load-hosts-") as folder, redis_on_socket(folder) as redis_path, \
            web_hosts(args.hosts) as hosts:
        os.chmod(folder, 0o755)
        env = {**os.environ,
               "DATABASE_URL": f"postgres://postgres@{quote(pg_socket, safe='')}/{DB_NAME}",
               "SECRET_KEY": "bench-only-secret-key-not-for-production",
               "CELERY_BROKER_URL": f"redis+socket://{redis_path}?virtual_host=0",
               "CACHE_URL": f"unix://{redis_path}?db=1",
               "DJANGO_SETTINGS_MODULE": "bench.floor_server.settings", "PYTHONPATH": str(ROOT),
               "LOG_LEVEL": "WARNING", "API_RATE_LIMIT": f"{RATE_LIMIT}/min", "EMBEDDING_PROVIDER": "offline",
               "EMBEDDING_THREADS": "1", "MEMORY_VAR_DIR": folder, "PY": str(ROOT / ".venv/bin/python"),
               "ALLOWED_HOSTS": ",".join(["127.0.0.1", "localhost", *(h.address for h in hosts)])}
        import psycopg

        admin = f"host={pg_socket} user=postgres dbname=postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{DB_NAME}"')
        subprocess.run([env["PY"], "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
        print(f"preparing {args.clients} keys and a conversation of {CAP - 10} messages ...", flush=True)
        prepared = json.loads(subprocess.run(
            [env["PY"], "-c", PREPARE.replace("CLIENTS", str(args.clients)).replace("CAP", str(CAP))],
            cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout)
        db_conn = psycopg.connect(f"host={pg_socket} user=postgres dbname={DB_NAME}", autocommit=True)

        def db(sql, params=None):
            return db_conn.execute(sql, params).fetchall()

        procs = {}
        for i, host in enumerate(hosts):
            procs[f"web{i}"] = subprocess.Popen(host.command([
                str(ROOT / ".venv/bin/gunicorn"), "-c", "memory_project/gunicorn.conf.py", "memory_project.wsgi",
                "--bind", f"{host.address}:{PORT}", "--workers", "2", "--threads", "4", "--timeout", "120"]),
                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            procs[f"celery{i}"] = subprocess.Popen(host.command([
                str(ROOT / ".venv/bin/celery"), "-A", "memory_project", "worker", "--concurrency", "1", "-l",
                "WARNING", "--without-gossip", "--without-mingle", "-n", f"bench{i}@%h"]),
                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        bases = [f"http://{h.address}:{PORT}" for h in hosts]
        try:
            for base in bases:
                deadline = time.monotonic() + 180
                while True:
                    with contextlib.suppress(httpx.HTTPError):
                        if httpx.get(f"{base}/healthz", timeout=5).status_code == 200:
                            break
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{base} did not come up")
                    time.sleep(0.5)
            asyncio.run(_mixed(prepared["keys"], bases, 5))  # warm-up, unmeasured

            def rss() -> dict[str, dict[int, float]]:
                return {name: {pid: _rss_mib(pid) for pid in _tree(proc.pid) or [proc.pid]}
                        for name, proc in procs.items()}

            rss_start = rss()
            print(f"hosts {', '.join(f'{h.namespace} at {h.address}' for h in hosts)}; "
                  f"{args.clients} clients for {args.seconds:.0f}s ...", flush=True)
            messages_before = db("SELECT count(*) FROM conversations_message m JOIN conversations_conversation c "
                                 "ON c.id = m.conversation_id WHERE c.external_id LIKE 'bench-%%'")[0][0]
            memories_before = db("SELECT count(*) FROM memories_memoryitem WHERE scope = 'chat'")[0][0]
            stats, per_host, errors, acked, elapsed = asyncio.run(_mixed(prepared["keys"], bases, args.seconds))
            messages = db("SELECT count(*) FROM conversations_message m JOIN conversations_conversation c "
                          "ON c.id = m.conversation_id WHERE c.external_id LIKE 'bench-%%'")[0][0] - messages_before
            memories = db("SELECT count(*) FROM memories_memoryitem WHERE scope = 'chat'")[0][0] - memories_before
            lost = []
            if messages != acked["append"]:
                lost.append(f"appends acknowledged {acked['append']}, stored {messages}")
            if memories != acked["memory_write"]:
                lost.append(f"memory writes acknowledged {acked['memory_write']}, stored {memories}")
            print(f"nothing lost: {'yes' if not lost else 'NO'} ({acked['append']} appends and "
                  f"{acked['memory_write']} memory writes acknowledged, {messages} and {memories} stored)", flush=True)
            failures = _checks(bases, prepared, env, db)
            rss_end = rss()
        finally:
            for proc in procs.values():
                proc.terminate()
            for proc in procs.values():
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
            with contextlib.suppress(NameError):
                db_conn.close()
    errors += lost + failures
    total = sum(len(v) for v in stats.values())
    every = [x for v in stats.values() for x in v]
    print(f"\nrequests: {total} in {elapsed:.1f}s = {total / elapsed:.1f} req/s through {len(bases)} web hosts")
    print(f"latency all: p50 {_pct(every, 0.50):.1f} ms, p99 {_pct(every, 0.99):.1f} ms")
    for host in sorted(per_host):
        print(f"  host {host}: n={len(per_host[host])} p50 {_pct(per_host[host], 0.5):.1f} ms "
              f"p99 {_pct(per_host[host], 0.99):.1f} ms")
    for op in sorted(stats):
        values = stats[op]
        print(f"  {op:<13} n={len(values):>6}  p50 {_pct(values, 0.5):7.1f} ms  p99 {_pct(values, 0.99):7.1f} ms")
    print(f"errors: {len(errors)}")
    for line in sorted(set(errors))[:10]:
        print(f"  {line} (x{errors.count(line)})")
    print("RSS (MiB) start -> end per process:")
    for name in procs:
        print(f"  {name}: " + ", ".join(f"{pid}: {rss_start[name].get(pid, 0):.0f} -> {rss_end[name].get(pid, 0):.0f}"
                                        for pid in sorted(set(rss_start[name]) | set(rss_end[name]))))
    print(f"load: {os.getloadavg()[0]:.2f} (1 min) at the end")
    return 1 if errors else 0
