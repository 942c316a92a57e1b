"""The throughput goals of `bench/floor.py` with the server as the bottleneck.

`bench/floor.py` drives its throughput goals from threads of one Python
process through httpx, which spends about as much CPU on a request as the
server: on a 2-CPU machine its figures are in part the client's. Here the
same pairs (a page of 20 messages beside the authenticated floor view, an
append beside the floor INSERT + COMMIT) are driven by client processes
that write each request from prepared bytes on a kept-alive socket, so the
server's CPU decides the ratio. For each pair and round it prints the two
rates and the CPU each request cost the web workers and PostgreSQL, then the
median ratio of 3 rounds:

    server-bound <name> <ratio>

It serves the database `bench/floor.py` seeds (run that first, or pass
`--seed` to seed it here) under the same production gunicorn configuration.

    .venv/bin/python bench/server_bound.py [--seed]

Environment as `bench/floor.py` (PG_URL, REDIS_URL, BENCH_REDIS_DB,
MEMORY_VAR_DIR). Traffic goes only to 127.0.0.1; it stops by itself.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import socket
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import floor  # noqa: E402 (after the project's root is on the path)
from bench.load import _cpu_seconds, _web_workers  # noqa: E402

ROUNDS = 3
SECONDS = 3.0
# Untimed, per side first: the server threads open their database connections.
WARM_UP_SECONDS = 1.0
APPENDED = json.dumps({"role": "user", "content": "I moved to Lisbon last spring and I still prefer tea in the morning."})


def _request(method: str, path: str, key: str, body: str = "") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body.encode())}\r\n"
    return (head + "\r\n" + body).encode()


def _client(port: int, request: bytes, seconds: float, counts: multiprocessing.Queue) -> None:
    """One client process: the same request, one at a time, for `seconds`."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buffered, done, stop_at = b"", 0, time.monotonic() + seconds
    while time.monotonic() < stop_at:
        sock.sendall(request)
        while b"\r\n\r\n" not in buffered:
            buffered += sock.recv(65536)
        head, _, buffered = buffered.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 2"):
            raise RuntimeError(head.split(b"\r\n", 1)[0].decode())
        length = int(head.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
        while len(buffered) < length:
            buffered += sock.recv(65536)
        buffered, done = buffered[length:], done + 1
    sock.close()
    counts.put(done)


def _processes(named: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().startswith(named):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _rate(server: floor.Server, requests: list[bytes], seconds: float = SECONDS) -> tuple[float, float, float]:
    """Requests/s of one client process per request, and the web workers'
    and PostgreSQL's CPU per request (us)."""
    counts: multiprocessing.Queue = multiprocessing.Queue()
    clients = [multiprocessing.Process(target=_client, args=(server.port, request, seconds, counts)) for request in requests]
    workers, database = _web_workers(server.proc.pid), _processes("postgres")
    web_before, db_before, started = _cpu_seconds(workers), _cpu_seconds(database), time.monotonic()
    for client in clients:
        client.start()
    done = sum(counts.get(timeout=seconds + 60) for _ in clients)
    for client in clients:
        client.join()
    elapsed = time.monotonic() - started
    if any(client.exitcode for client in clients):
        raise RuntimeError("a client process failed")
    web, db = _cpu_seconds(workers) - web_before, _cpu_seconds(database) - db_before
    return done / elapsed, web / done * 1e6, db / done * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", action="store_true", help="seed the database here (as bench/floor.py does)")
    args = parser.parse_args()
    env = floor._env("postgresql")
    saved = Path(env["MEMORY_VAR_DIR"]) / "seed.json"
    if args.seed or not saved.exists():
        floor._reset_database("postgresql", env)
        saved.write_text(json.dumps(floor._seed("postgresql", env, False)))
    keys = json.loads(saved.read_text())["keys"]
    run = time.strftime("%H%M%S")
    pairs = {
        # 8 readers, as bench/floor.py's page goal.
        "page_vs_floor": (
            [_request("GET", "/v1/conversations/bench:big/messages?limit=20", key) for key in keys[:8]],
            [_request("GET", "/v1/bench/floor/ping", key) for key in keys[:8]],
        ),
        # 16 writers, each to a conversation of its own, as its append goal.
        "append_vs_floor": (
            [_request("POST", f"/v1/conversations/bound-{run}-{n}/messages", key, APPENDED) for n, key in enumerate(keys)],
            [_request("POST", "/v1/bench/floor/insert", key, APPENDED) for key in keys],
        ),
    }
    server = floor.Server("postgresql", env)
    try:
        for name, (path_requests, floor_requests) in pairs.items():
            for requests in (path_requests, floor_requests):
                _rate(server, requests, WARM_UP_SECONDS)
            ratios = []
            for round_no in range(ROUNDS):
                sides = {}
                for side, requests in (("path", path_requests), ("floor", floor_requests))[:: 1 if round_no % 2 == 0 else -1]:
                    sides[side] = _rate(server, requests)
                ratios.append(sides["path"][0] / sides["floor"][0])
                (path_rate, path_web, path_db), (floor_rate, floor_web, floor_db) = sides["path"], sides["floor"]
                print(f"{name} round {round_no + 1}: {path_rate:.0f} req/s (web {path_web:.0f} us, postgres {path_db:.0f} us "
                      f"a request) vs floor {floor_rate:.0f} req/s (web {floor_web:.0f} us, postgres {floor_db:.0f} us)",
                      flush=True)
            print(f"server-bound {name} {statistics.median(ratios):.2f}", flush=True)
    finally:
        server.stop()
    load = os.getloadavg()
    print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
