"""Throughput of each framework adapter beside the framework's own local backend.

Starts the service (gunicorn, 2 workers) on its own SQLite file under
MEMORY_VAR_DIR (or on PostgreSQL `bench_adapters` when DATABASE_URL points at
PostgreSQL), then runs the same workload through:

- OpenAI Agents: `SQLiteSession` vs `client.openai_session`
- Claude Agent SDK: `InMemorySessionStore` vs `client.claude_session_store()`
- LangGraph: a 3-node StateGraph with `SqliteSaver` (and `PostgresSaver` when
  PostgreSQL is configured) vs `client.langgraph_checkpointer`

and prints operations per second and the ratio adapter / local. The adapters
pay an HTTP round trip per operation, so ratios well below 1 are expected;
the figures say how far below.

    MEMORY_VAR_DIR=/tmp/var_bench .venv/bin/python bench/adapters.py
"""

from __future__ import annotations

import asyncio
import operator
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Annotated, TypedDict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
VAR = Path(os.environ.get("MEMORY_VAR_DIR", ROOT / "var")) / "bench_adapters"
VAR.mkdir(parents=True, exist_ok=True)
PG_URL = os.environ.get("DATABASE_URL", "")
TURNS = int(os.environ.get("BENCH_TURNS", "100"))


def _server_env() -> dict[str, str]:
    env = {**os.environ, "MEMORY_VAR_DIR": str(VAR), "API_RATE_LIMIT": "1000000/min", "LOG_LEVEL": "WARNING"}
    if PG_URL.startswith("postgres"):
        env["DATABASE_URL"] = PG_URL.rsplit("/", 1)[0] + "/bench_adapters"
        env.setdefault("SECRET_KEY", "bench-only")
    else:
        env.pop("DATABASE_URL", None)
        env["SQLITE_PATH"] = str(VAR / "bench.sqlite3")
        (VAR / "bench.sqlite3").unlink(missing_ok=True)
    return env


def _setup_database(env: dict[str, str]) -> str:
    if "DATABASE_URL" in env:
        admin = PG_URL.rsplit("/", 1)[0] + "/postgres"
        import psycopg

        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS bench_adapters")
            conn.execute("CREATE DATABASE bench_adapters")
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    code = (
        "import django; django.setup();"
        "from accounts.models import Workspace; from accounts.services import api_key_create;"
        "ws = Workspace.objects.create(name='bench', slug='bench');"
        "print(api_key_create(workspace=ws, name='bench').raw_key)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "memory_project.settings"},
        check=True, capture_output=True, text=True,
    )
    return out.stdout.strip().splitlines()[-1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_server(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    process = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "memory_project.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "2",
         "--threads", "4", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )
    url = f"http://127.0.0.1:{port}"
    import httpx

    for _ in range(100):
        try:
            httpx.get(url + "/healthz", timeout=1)
            return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    process.terminate()
    raise RuntimeError("the server did not start")


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds else float("inf")


def _report(name: str, ops: int, local: tuple[str, float], ours: float) -> None:
    label, local_seconds = local
    local_rate, our_rate = _rate(ops, local_seconds), _rate(ops, ours)
    print(f"{name:<34} {label:<22} {local_rate:>9.0f} ops/s   adapter {our_rate:>8.0f} ops/s   ratio {our_rate / local_rate:.3f}")


# --- Workloads ------------------------------------------------------------------


async def _openai(session) -> int:
    ops = 0
    for turn in range(TURNS):
        await session.add_items([{"role": "user", "content": f"question {turn}"}, {"role": "assistant", "content": f"answer {turn}"}])
        await session.get_items(limit=20)
        ops += 2
    await session.pop_item()
    return ops + 1


async def _claude(store, project: str) -> int:
    ops = 0
    key = {"project_key": project, "session_id": str(uuid.uuid4())}
    for turn in range(TURNS):
        await store.append(key, [
            {"type": "user", "uuid": str(uuid.uuid4()), "message": {"role": "user", "content": f"q{turn}"}},
            {"type": "assistant", "uuid": str(uuid.uuid4()), "message": {"role": "assistant", "content": f"a{turn}"}},
        ])
        ops += 1
    for _ in range(10):
        await store.load(key)
        ops += 1
    await store.list_sessions(project)
    return ops + 1


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def _graph(checkpointer):
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(State)
    for name in ("a", "b", "c"):
        builder.add_node(name, lambda state, name=name: {"log": [name]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    builder.add_edge("c", END)
    return builder.compile(checkpointer=checkpointer)


def _langgraph(checkpointer) -> int:
    graph = _graph(checkpointer)
    runs = max(TURNS // 5, 5)
    for run in range(runs):
        graph.invoke({"log": [f"in{run}"]}, {"configurable": {"thread_id": f"bench-{run % 4}"}})
    return runs


def _timed(fn, *args) -> tuple[float, int]:
    start = time.perf_counter()
    ops = fn(*args)
    return time.perf_counter() - start, ops


def _atimed(coro) -> tuple[float, int]:
    start = time.perf_counter()
    ops = asyncio.run(coro)
    return time.perf_counter() - start, ops


def main() -> None:
    env = _server_env()
    key = _setup_database(env)
    process, url = _start_server(env)
    try:
        from agents import SQLiteSession
        from claude_agent_sdk import InMemorySessionStore
        from langgraph.checkpoint.sqlite import SqliteSaver

        from memory_client import MemoryClient

        client = MemoryClient(url, key)
        backend = "PostgreSQL" if "DATABASE_URL" in env else "SQLite"
        print(f"adapters vs local backends; service on {backend}, {TURNS} turns per workload")
        start = time.perf_counter()
        for _ in range(50):
            client.list_conversations(limit=1)
        print(f"one authenticated GET round trip: {(time.perf_counter() - start) / 50 * 1000:.1f} ms")

        with tempfile.TemporaryDirectory() as tmp:
            local_s, ops = _atimed(_openai(SQLiteSession("bench", str(Path(tmp) / "agents.db"))))
            ours_s, _ = _atimed(_openai(client.openai_session("bench-openai")))
            _report("openai Session", ops, ("SQLiteSession(file)", local_s), ours_s)

            local_s, ops = _atimed(_claude(InMemorySessionStore(), "proj"))
            ours_s, _ = _atimed(_claude(client.claude_session_store(), "proj"))
            _report("claude SessionStore", ops, ("InMemorySessionStore", local_s), ours_s)

            with SqliteSaver.from_conn_string(str(Path(tmp) / "lg.db")) as saver:
                local_s, runs = _timed(_langgraph, saver)
            ours_s, _ = _timed(_langgraph, client.langgraph_checkpointer)
            _report("langgraph checkpointer (runs)", runs, ("SqliteSaver(file)", local_s), ours_s)

            if PG_URL.startswith("postgres"):
                from langgraph.checkpoint.postgres import PostgresSaver

                with PostgresSaver.from_conn_string(PG_URL.rsplit("/", 1)[0] + "/bench_adapters") as saver:
                    saver.setup()
                    local_s, runs = _timed(_langgraph, saver)
                _report("langgraph checkpointer (runs)", runs, ("PostgresSaver", local_s), ours_s)
            else:
                print("(set DATABASE_URL=postgres://... to compare with PostgresSaver too)")
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
