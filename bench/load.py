"""A bounded mixed workload against the real service on loopback.

Starts gunicorn (the production config, 2 workers x 4 threads, as `make
run`) on a free 127.0.0.1 port and a Celery worker, both on PostgreSQL (database `bench_load`, created
afresh) and Redis (broker and cache on their own database numbers), then runs
50 concurrent clients for 60 seconds, each with its own API key: appends,
message reads, memory writes, memory searches and context assembly. Prints
throughput, p50/p99 latency per operation, the error count (anything but the
expected 2xx), the web workers' CPU per request beside an authenticated DRF
view that does nothing (the same clients, afterwards), and the web workers'
resident memory at the start and the end.

    .venv/bin/python bench/load.py [--clients 50] [--seconds 60] [--hosts 2]

With `--hosts 2` (or more; root only) the service runs on that many web hosts,
network namespaces of the run's own, each with gunicorn and a Celery worker,
sharing one PostgreSQL and one Redis; the run then also checks what must hold
across hosts (see bench/load_hosts.py).

Environment: PG_URL (server, default postgres://postgres@127.0.0.1:5432),
REDIS_URL (default redis://127.0.0.1:6379), BENCH_REDIS_DB (default 13; the
cache uses the next one). Traffic goes only to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
DB_NAME = "bench_load"
WEB_WORKERS = 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    pg = os.environ.get("PG_URL", "postgres://postgres@127.0.0.1:5432").rstrip("/")
    redis = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379").rstrip("/")
    db = int(os.environ.get("BENCH_REDIS_DB", "13"))
    var = Path(os.environ.get("MEMORY_VAR_DIR", ROOT / "var")) / "bench_load"
    var.mkdir(parents=True, exist_ok=True)
    return {
        **os.environ,
        "MEMORY_VAR_DIR": str(var),
        "DATABASE_URL": f"{pg}/{DB_NAME}",
        "SECRET_KEY": "bench-only-secret-key-not-for-production",
        "CELERY_BROKER_URL": f"{redis}/{db}",
        "CACHE_URL": f"{redis}/{db + 1}",
        # The service's settings plus the floor view (bench.floor_server).
        "DJANGO_SETTINGS_MODULE": "bench.floor_server.settings",
        "PYTHONPATH": str(ROOT),
        "LOG_LEVEL": "WARNING",
        "API_RATE_LIMIT": "100000000/min",
    }


def _run(cmd: list[str], env: dict[str, str]) -> str:
    return subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout


def _prepare(env: dict[str, str], clients: int) -> list[str]:
    pg_admin = env["DATABASE_URL"].rsplit("/", 1)[0] + "/postgres"
    import psycopg

    with psycopg.connect(pg_admin.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')
    _run([PY, "manage.py", "migrate", "--noinput", "-v", "0"], env)
    import redis

    for url in (env["CELERY_BROKER_URL"], env["CACHE_URL"]):
        redis.Redis.from_url(url).flushdb()
    code = (
        "import django; django.setup()\n"
        "from accounts.services import workspace_create, api_key_create\n"
        "ws = workspace_create(name='Bench', slug='bench')\n"
        f"for i in range({clients}): print(api_key_create(workspace=ws, name=f'client-{{i}}').raw_key)\n"
    )
    return _run([PY, "-c", code], env).split()


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time the processes have used so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


async def _floor_client(key: str, base: str, stop_at: float, count: list[int], errors: list) -> None:
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
        while time.monotonic() < stop_at:
            response = await client.get("/v1/bench/floor/ping")
            if response.status_code != 200:
                errors.append(f"floor -> {response.status_code}")
            count[0] += 1


async def _floor_load(keys: list[str], base: str, seconds: float) -> tuple[int, list]:
    count, errors = [0], []
    stop_at = time.monotonic() + seconds
    await asyncio.gather(*(_floor_client(key, base, stop_at, count, errors) for key in keys))
    return count[0], errors


def _web_workers(master: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(master)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _wait_http(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


WORDS = ["tea", "coffee", "Berlin", "deadline", "invoice", "garden", "piano", "ticket", "report", "会议", "咖啡"]


async def _client(n: int, key: str, base: str, stop_at: float, stats: dict, errors: list) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    rng = random.Random(n)
    cid = f"bench-{n}"
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
        while time.monotonic() < stop_at:
            roll = rng.random()
            word = rng.choice(WORDS)
            if roll < 0.35:
                op, call = "append", client.post(
                    f"/v1/conversations/{cid}/messages",
                    json={"role": rng.choice(["user", "assistant"]), "content": f"I mentioned {word} again, number {rng.randint(1, 10**6)}."},
                )
                ok = {201}
            elif roll < 0.55:
                op, call = "read", client.get(f"/v1/conversations/{cid}/messages", params={"limit": 20})
                ok = {200, 404}  # 404 until the client's first append
            elif roll < 0.70:
                op, call = "memory_write", client.post(
                    "/v1/memories", json={"scope": "chat", "scope_id": cid, "type": "fact", "content": f"Likes {word} #{rng.randint(1, 10**6)}"}
                )
                ok = {201}
            elif roll < 0.85:
                op, call = "search", client.get("/v1/memories", params={"q": word, "limit": 10})
                ok = {200}
            else:
                op, call = "context", client.post(f"/v1/conversations/{cid}/context", json={"query": word, "max_messages": 20})
                ok = {200, 404}
            started = time.perf_counter()
            try:
                response = await call
                status = response.status_code
            except httpx.HTTPError as exc:
                status = f"{exc.__class__.__name__}"
            elapsed = time.perf_counter() - started
            stats[op].append(elapsed)
            if status not in ok:
                errors.append(f"{op} -> {status}")


async def _load(keys: list[str], base: str, seconds: float) -> tuple[dict, list, float]:
    stats: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    started = time.monotonic()
    await asyncio.gather(*(_client(n, key, base, started + seconds, stats, errors) for n, key in enumerate(keys)))
    return stats, errors, time.monotonic() - started


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--hosts", type=int, default=1,
                        help="web hosts (network namespaces of the run's own, root only); see bench/load_hosts.py")
    args = parser.parse_args()
    if args.hosts > 1:
        sys.path.insert(0, str(ROOT))
        from bench.load_hosts import main_hosts

        return main_hosts(args)

    env = _env()
    print(f"preparing database {DB_NAME} and {args.clients} API keys ...", flush=True)
    keys = _prepare(env, args.clients)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    web = subprocess.Popen(
        [str(Path(PY).parent / "gunicorn"), "-c", "memory_project/gunicorn.conf.py", "memory_project.wsgi",
         "--bind", f"127.0.0.1:{port}", "--workers", str(WEB_WORKERS), "--threads", "4", "--timeout", "60"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    worker = subprocess.Popen(
        [str(Path(PY).parent / "celery"), "-A", "memory_project", "worker", "--concurrency", "1", "-l", "WARNING",
         "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        _wait_http(f"{base}/healthz")
        # The first worker may answer before the master has forked the second:
        # wait for both, or the CPU per request counts one worker's only.
        deadline = time.monotonic() + 30
        while len(workers := _web_workers(web.pid)) < WEB_WORKERS and time.monotonic() < deadline:
            time.sleep(0.1)
        rss_boot = {pid: _rss_kib(pid) for pid in workers}
        # Imports and tokenizer tables load on first use: a short unmeasured
        # warm-up, so start -> end shows growth under load, not start-up.
        asyncio.run(_load(keys, base, 5))
        rss_start = {pid: _rss_kib(pid) for pid in workers}
        print(f"gunicorn on {base} (workers {workers}), celery worker {worker.pid}; "
              f"{args.clients} clients for {args.seconds:.0f}s ...", flush=True)
        cpu_before = _cpu_seconds(workers)
        stats, errors, elapsed = asyncio.run(_load(keys, base, args.seconds))
        web_cpu = _cpu_seconds(workers) - cpu_before
        rss_end = {pid: _rss_kib(pid) for pid in _web_workers(web.pid)}
        # The floor: the same clients on an authenticated DRF view that does nothing.
        cpu_before = _cpu_seconds(workers)
        floor_requests, floor_errors = asyncio.run(_floor_load(keys, base, min(15.0, args.seconds)))
        floor_cpu = _cpu_seconds(workers) - cpu_before
        errors += floor_errors
    finally:
        for proc in (web, worker):
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in (web, worker):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)

    total = sum(len(v) for v in stats.values())
    every = [x for v in stats.values() for x in v]
    print(f"\nrequests: {total} in {elapsed:.1f}s = {total / elapsed:.1f} req/s")
    print(f"latency all: p50 {_pct(every, 0.50):.1f} ms, p99 {_pct(every, 0.99):.1f} ms, "
          f"mean {statistics.fmean(every) * 1000:.1f} ms")
    for op in sorted(stats):
        values = stats[op]
        print(f"  {op:<13} n={len(values):>6}  p50 {_pct(values, 0.5):7.1f} ms  p99 {_pct(values, 0.99):7.1f} ms")
    print(f"web CPU per request: {web_cpu / max(total, 1) * 1000:.2f} ms (mixed), "
          f"{floor_cpu / max(floor_requests, 1) * 1000:.2f} ms (floor view, {floor_requests} requests)")
    print(f"errors: {len(errors)}")
    for line in sorted(set(errors))[:10]:
        print(f"  {line} (x{errors.count(line)})")
    print("web worker RSS (MiB), boot / after warm-up (start) -> end: " + ", ".join(
        f"{pid}: {rss_boot.get(pid, 0) / 1024:.0f} / {rss_start.get(pid, 0) / 1024:.0f} -> {rss_end.get(pid, 0) / 1024:.0f}"
        for pid in sorted(rss_start)
    ))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
