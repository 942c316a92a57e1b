"""The LangGraph checkpointers from Node and from Python, each beside its
framework's own PostgreSQL saver on the same PostgreSQL server, in one run.

Starts the service (gunicorn, 2 workers) on PostgreSQL database
`bench_node_service`; LangGraph's savers get databases of their own
(`bench_node_saver_js`, `bench_node_saver_py`). Each side runs a 10-step
graph, round after round, alternating between the service's checkpointer
and the framework's saver so both see the same load, and prints the ratio
of their throughputs (the service's / the saver's):

    ratio langgraphjs_vs_postgres_saver <value> >= 0.5   (LangGraph.js, memory-client-node)
    ratio langgraph_vs_postgres_saver <value>            (Python, memory_client)

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x REDIS_URL=redis://127.0.0.1:6381 \
        .venv/bin/python bench/adapters_node.py

Needs PostgreSQL (DATABASE_URL; without it, it says so and stops) and the
Node package's dependencies (`make node-deps`).
"""

from __future__ import annotations

import json
import operator
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, TypedDict
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PACKAGE = ROOT / "memory-client-node"
STEPS = 10
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "6"))
RUNS_PER_ROUND = int(os.environ.get("BENCH_RUNS", "5"))


def _database_url(name: str) -> str:
    """A fresh database `name` on DATABASE_URL's server (dropped and re-created)."""
    import psycopg

    parts = urlsplit(os.environ["DATABASE_URL"])
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(parts._replace(path=f"/{name}"))


def _service() -> tuple[subprocess.Popen, str, str]:
    env = {**os.environ, "DATABASE_URL": _database_url("bench_node_service"), "API_RATE_LIMIT": "1000000/min",
           "LOG_LEVEL": "WARNING", "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-only-secret")}
    if os.environ.get("REDIS_URL"):
        env["CACHE_URL"] = os.environ["REDIS_URL"].rstrip("/") + "/3"
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    code = (
        "import django; django.setup();"
        "from accounts.models import Workspace; from accounts.services import api_key_create;"
        "ws = Workspace.objects.create(name='bench', slug='bench');"
        "print(api_key_create(workspace=ws, name='bench').raw_key)"
    )
    key = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True,
                         env={**env, "DJANGO_SETTINGS_MODULE": "memory_project.settings"}).stdout.strip().splitlines()[-1]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "-c", "memory_project/gunicorn.conf.py", "memory_project.wsgi",
         "--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "4", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return process, f"http://127.0.0.1:{port}", key
        except OSError:
            time.sleep(0.2)
    process.terminate()
    raise RuntimeError("the service did not start")


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def _graph(checkpointer):
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(State)
    for i in range(STEPS):
        builder.add_node(f"s{i}", lambda state, i=i: {"log": [f"s{i}"]})
    builder.add_edge(START, "s0")
    for i in range(1, STEPS):
        builder.add_edge(f"s{i - 1}", f"s{i}")
    builder.add_edge(f"s{STEPS - 1}", END)
    return builder.compile(checkpointer=checkpointer)


def _runs(graph, round_: int, label: str) -> float:
    start = time.perf_counter()
    for run in range(RUNS_PER_ROUND):
        graph.invoke({"log": [f"in{round_}.{run}"]}, {"configurable": {"thread_id": f"{label}-{run % 4}"}})
    return time.perf_counter() - start


def _python_ratio(url: str, key: str) -> float:
    from langgraph.checkpoint.postgres import PostgresSaver

    from memory_client import MemoryClient

    with MemoryClient(url, key, max_retries=4) as client, \
            PostgresSaver.from_conn_string(_database_url("bench_node_saver_py")) as saver:
        saver.setup()
        ours, theirs = _graph(client.langgraph_checkpointer), _graph(saver)
        _runs(ours, -1, "warm")
        _runs(theirs, -1, "warm")
        ours_s = theirs_s = 0.0
        for round_ in range(ROUNDS):
            ours_s += _runs(ours, round_, "bench")
            theirs_s += _runs(theirs, round_, "bench")
    total = ROUNDS * RUNS_PER_ROUND
    print(f"langgraph {STEPS}-step runs: memory checkpointer {total / ours_s:.1f} runs/s, "
          f"PostgresSaver {total / theirs_s:.1f} runs/s ({total} runs each, interleaved)")
    return theirs_s / ours_s


def main() -> None:
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        print("bench/adapters_node.py compares with LangGraph's PostgreSQL savers: set DATABASE_URL=postgres://...")
        return
    if not (PACKAGE / "node_modules").is_dir():
        print("bench/adapters_node.py needs the Node package's dependencies: make node-deps")
        return
    subprocess.run(["npm", "run", "--silent", "build"], cwd=PACKAGE, check=True)
    process, url, key = _service()
    try:
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        node = subprocess.run(
            ["node", "bench/langgraph-checkpointer.mjs", _database_url("bench_node_saver_js")], cwd=PACKAGE,
            env={**os.environ, "MEMORY_BASE_URL": url, "MEMORY_API_KEY": key, "BENCH_ROUNDS": str(ROUNDS),
                 "BENCH_RUNS": str(RUNS_PER_ROUND)},
            capture_output=True, text=True, timeout=900,
        )
        if node.returncode != 0:
            raise RuntimeError(node.stdout[-3000:] + node.stderr[-3000:])
        lines = node.stdout.strip().splitlines()
        print(lines[0])
        js_ratio = json.loads(lines[-1])["ratio"]
        py_ratio = _python_ratio(url, key)
        print(f"ratio langgraphjs_vs_postgres_saver {js_ratio:.3f} >= 0.5")
        print(f"ratio langgraph_vs_postgres_saver {py_ratio:.3f}")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        process.terminate()
        process.wait(timeout=30)


if __name__ == "__main__":
    main()
