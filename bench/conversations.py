"""Conversation store benchmark, over real HTTP against gunicorn on loopback.

Prints:
- append throughput with 1 and 16 concurrent clients,
- get-messages page time at the first page and deep in a 10,000-message
  conversation (keyset cursors: the ratio should stay near 1),
- list-conversations time for one user among 100,000 conversations.

Database: a fresh SQLite file under MEMORY_VAR_DIR (default), or, when
DATABASE_URL is set, a PostgreSQL database named `bench_conversations` on that
server. Run: `.venv/bin/python bench/conversations.py`.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
APPEND_SINGLE = 300
APPEND_CLIENTS = 16
APPEND_PER_CLIENT = 40
BIG_CONVERSATION = 10_000
CONVERSATIONS = 100_000
USERS = 1_000  # -> 100 conversations per user
SAMPLES = 40


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("MEMORY_VAR_DIR", str(Path(tempfile.gettempdir()) / "memory-bench"))
    Path(env["MEMORY_VAR_DIR"]).mkdir(parents=True, exist_ok=True)
    env["API_RATE_LIMIT"] = "100000000/min"  # measure the service, not the throttle
    env.setdefault("LOG_LEVEL", "WARNING")
    if env.get("DATABASE_URL"):
        parts = urlsplit(env["DATABASE_URL"])
        admin_url = urlunsplit(parts._replace(path="/postgres"))
        env["DATABASE_URL"] = urlunsplit(parts._replace(path="/bench_conversations"))
        env.setdefault("SECRET_KEY", "bench-only-secret")
        import psycopg

        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS bench_conversations WITH (FORCE)")
            conn.execute("CREATE DATABASE bench_conversations")
    else:
        path = Path(env["MEMORY_VAR_DIR"]) / "bench_conversations.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        env["SQLITE_PATH"] = str(path)
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _timed(fn, samples: int = SAMPLES) -> float:
    """Median wall time of `fn()` in milliseconds."""
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _seed(env: dict[str, str]) -> dict[str, str]:
    """Workspace, key, a 10,000-message conversation and 100,000 conversations."""
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.db import transaction
    from django.utils import timezone

    from accounts.services import api_key_create, workspace_create
    from conversations.models import Branch, Conversation, Message
    from conversations.services import conversation_get_or_create

    workspace = workspace_create(name="Bench", slug="bench")
    raw_key = api_key_create(workspace=workspace, name="bench").raw_key

    conversation, _ = conversation_get_or_create(workspace=workspace, external_id="bench:big")
    with transaction.atomic():
        branch = Branch.objects.get(conversation=conversation, name="main")
        Message.objects.bulk_create(
            [
                Message(
                    workspace=workspace,
                    conversation=conversation,
                    branch=branch,
                    floor_no=i,
                    role="user" if i % 2 else "assistant",
                    content=f"message number {i} with a little text to carry",
                    content_size_bytes=48,
                    token_estimate=12,
                )
                for i in range(1, BIG_CONVERSATION + 1)
            ],
            batch_size=2000,
        )
        Branch.objects.filter(pk=branch.pk).update(next_floor_no=BIG_CONVERSATION + 1)
        Conversation.objects.filter(pk=conversation.pk).update(message_count=BIG_CONVERSATION, last_message_at=timezone.now())
    deep = Message.objects.get(branch=branch, floor_no=BIG_CONVERSATION - 200).pk

    now = timezone.now()
    Conversation.objects.bulk_create(
        [
            Conversation(
                workspace=workspace,
                external_id=f"bench:list:{i}",
                user_id=f"user-{i % USERS}",
                last_message_at=now - timedelta(seconds=i),
            )
            for i in range(CONVERSATIONS)
        ],
        batch_size=5000,
    )
    # The floor under every write: one committed single-row UPDATE (disk sync included).
    from django.db import connection

    def one_commit():
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("UPDATE conversations_conversation SET message_count = message_count WHERE id = %s", [conversation.pk])

    return {"key": raw_key, "deep_cursor": deep, "commit_ms": f"{_timed(one_commit, 20):.2f}"}


def _serve(env: dict[str, str], port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [
            str(Path(PYTHON).parent / "gunicorn"),
            "memory_project.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
            "--threads",
            "8",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    import httpx

    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("the server did not start")


def _append_throughput(base: str, key: str, clients: int, per_client: int) -> float:
    import httpx

    errors: list[int] = []

    def run(worker: int) -> None:
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
            for i in range(per_client):
                cid = quote(f"bench:append:{worker}", safe="")
                response = client.post(f"/v1/conversations/{cid}/messages", json={"role": "user", "content": f"hello {i}"})
                if response.status_code != 201:
                    errors.append(response.status_code)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise SystemExit(f"append errors: {sorted(set(errors))}")
    return clients * per_client / elapsed


def main() -> None:
    import httpx

    env = _environment()
    backend = "PostgreSQL" if env.get("DATABASE_URL") else "SQLite"
    subprocess.run([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    started = time.perf_counter()
    seeded = _seed(env)
    print(f"conversations bench on {backend}: seeded {BIG_CONVERSATION} messages + {CONVERSATIONS} conversations in {time.perf_counter() - started:.1f}s")

    print(f"baseline: one committed single-row UPDATE takes {seeded['commit_ms']} ms on this machine (an append commits twice)")
    port = _free_port()
    server = _serve(env, port)
    base = f"http://127.0.0.1:{port}"
    try:
        _append_throughput(base, seeded["key"], 2, 5)  # warm both workers
        single = _append_throughput(base, seeded["key"], 1, APPEND_SINGLE)
        print(f"append, 1 client:   {single:8.1f} messages/s ({APPEND_SINGLE} appends)")
        multi = _append_throughput(base, seeded["key"], APPEND_CLIENTS, APPEND_PER_CLIENT)
        print(f"append, {APPEND_CLIENTS} clients: {multi:8.1f} messages/s ({APPEND_CLIENTS * APPEND_PER_CLIENT} appends)")

        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {seeded['key']}"}, timeout=60) as client:
            big = quote("bench:big", safe="")

            def page(**params):
                response = client.get(f"/v1/conversations/{big}/messages", params={"limit": 100, **params})
                assert response.status_code == 200 and len(response.json()["data"]) == 100, response.text[:200]

            page()
            first = _timed(page)
            deep = _timed(lambda: page(after=seeded["deep_cursor"]))
            print(f"get messages (limit 100) first page: {first:6.2f} ms; deep (after floor {BIG_CONVERSATION - 200}): {deep:6.2f} ms; ratio {deep / first:.2f}")

            def by_user():
                response = client.get("/v1/conversations", params={"user_id": "user-42", "limit": 20})
                assert response.status_code == 200 and len(response.json()["data"]) == 20, response.text[:200]
                return response.json()["meta"]["next_cursor"]

            cursor = by_user()
            user_first = _timed(by_user)

            def by_user_next():
                response = client.get("/v1/conversations", params={"user_id": "user-42", "limit": 20, "after": cursor})
                assert response.status_code == 200 and len(response.json()["data"]) == 20

            user_next = _timed(by_user_next)

            def everyone():
                assert client.get("/v1/conversations", params={"limit": 20}).status_code == 200

            all_first = _timed(everyone)
            print(
                f"list conversations among {CONVERSATIONS}: user filter {user_first:6.2f} ms (next page {user_next:6.2f} ms); "
                f"unfiltered {all_first:6.2f} ms"
            )
    finally:
        server.terminate()
        server.wait(timeout=20)

    # The same reads without HTTP, through the selectors the API calls.
    from accounts.models import Workspace
    from conversations.selectors.conversations import conversation_list
    from conversations.selectors.messages import message_page

    workspace = Workspace.objects.get(slug="bench")
    first = _timed(lambda: message_page(workspace=workspace, external_id="bench:big", limit=100))
    deep = _timed(lambda: message_page(workspace=workspace, external_id="bench:big", limit=100, after=seeded["deep_cursor"]))
    listed = _timed(lambda: conversation_list(workspace=workspace, filters={"user_id": "user-42"}, limit=20))
    print(
        f"in-process selectors: message page first {first:.2f} ms, deep {deep:.2f} ms (ratio {deep / first:.2f}); "
        f"list by user {listed:.2f} ms"
    )


if __name__ == "__main__":
    main()
