"""Admin console benchmark: the memories changelist over 100,000 memories.

Prints, for a few typical operator views (the default review-first ordering,
filters, a search in English and in Chinese, the review queue and the
dashboard), the median render time of the whole page through Django's test
client as a logged-in superuser, and the number of SQL queries it took (which
must not depend on the table's size).

The rows are bulk-inserted (the benchmark measures reads; writing 100,000
memories through the services would only measure the services). Database: a
fresh SQLite file under MEMORY_VAR_DIR (default), or, when DATABASE_URL is
set, a PostgreSQL database named `bench_admin` on that server.
Run: `.venv/bin/python bench/admin.py`.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import prepare_database  # noqa: E402

MEMORIES = 100_000
INSERT_BATCH = 5_000
SAMPLES = 7


prepare_database("admin")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from accounts.models import Workspace  # noqa: E402
from memories.models import MemoryItem  # noqa: E402
from memories.search import sqlite_index_drop, sqlite_index_ensure  # noqa: E402
from memories.services.versioning import content_fingerprint  # noqa: E402

WORDS = ["user", "prefers", "coffee", "tea", "lives", "in", "Lisbon", "Porto", "travel", "plans", "meeting", "invoice", "project", "deadline", "dog", "cat"]
CHINESE = ["用户喜欢喝咖啡", "住在上海", "下周去东京出差", "对花生过敏", "每天早上跑步"]


def populate() -> None:
    # Loading 100,000 rows through the FTS5 triggers costs minutes; drop the
    # index for the load and rebuild it once afterwards (SQLite only).
    sqlite_index_drop()
    try:
        _insert()
    finally:
        sqlite_index_ensure()


def _insert() -> None:
    rng = random.Random(7)
    workspaces = [
        Workspace.objects.create(name="Bench A", slug="bench-a", requires_review=True),
        Workspace.objects.create(name="Bench B", slug="bench-b"),
    ]
    now = timezone.now()
    batch: list[MemoryItem] = []
    for i in range(MEMORIES):
        if i % 10 == 0:
            text = f"{rng.choice(CHINESE)}，第{i}条记忆。"
        else:
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 60))) + f" #{i}"
        sha, size = content_fingerprint(text)
        kind = rng.choice(["fact", "fact", "fact", "summary", "open_loop"])
        lifecycle = "pending" if i % 50 == 0 else rng.choice(["active", "active", "active", "deprecated"])
        batch.append(
            MemoryItem(
                workspace=workspaces[i % 2],
                scope=rng.choice(["global", "chat", "branch"]),
                scope_id=f"chat-{i % 500}",
                type=kind,
                summary_tier="micro" if kind == "summary" else None,
                content=text,
                content_sha256=sha,
                content_size_bytes=size,
                fact_key=f"key_{i % 1000}" if kind == "fact" else None,
                importance=round(rng.random(), 2),
                confidence=round(rng.random(), 2),
                status="deprecated" if lifecycle == "deprecated" else "active",
                lifecycle_status=lifecycle,
                source_message_id=f"msg_{i}" if i % 3 == 0 else None,
                token_count_estimate=size // 4,
            )
        )
        if len(batch) >= INSERT_BATCH:
            MemoryItem.objects.bulk_create(batch)
            batch = []
    if batch:
        MemoryItem.objects.bulk_create(batch)
    # Spread creation over 60 days so the dashboard's chart has a shape
    # (`created_at` is set on insert, so it is moved afterwards).
    ids = list(MemoryItem.objects.order_by("pk").values_list("pk", flat=True))
    per_day = len(ids) // 60 + 1
    for day in range(60):
        chunk = ids[day * per_day : (day + 1) * per_day]
        for start in range(0, len(chunk), 900):
            MemoryItem.objects.filter(pk__in=chunk[start : start + 900]).update(created_at=now - timedelta(days=day))


def measure(client: Client, url: str) -> tuple[float, int, int]:
    client.get(url)  # warm: templates, content types
    times = []
    queries = 0
    for _ in range(SAMPLES):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = client.get(url)
            times.append(time.perf_counter() - started)
        assert response.status_code == 200, (url, response.status_code)
        queries = len(captured.captured_queries)
    return statistics.median(times), queries, len(response.content)


def main() -> None:
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    populate()
    if connection.vendor == "postgresql":
        # What autovacuum would do shortly after a load this size.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    print(f"database: {connection.vendor}; {MemoryItem.objects.count()} memories inserted in {time.perf_counter() - started:.1f}s")
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_superuser("bench", "bench@example.com", "bench-pass-123")
    client = Client()
    client.force_login(user)
    views = [
        ("memories changelist (default order: pending, low confidence, newest)", "/admin/memories/memoryitem/"),
        ("filtered: type=fact, confidence < 0.3, active", "/admin/memories/memoryitem/?type__exact=fact&confidence__lt=0.3&lifecycle_status__exact=active"),
        ("search 'coffee tea'", "/admin/memories/memoryitem/?q=coffee+tea"),
        ("search '咖啡' (2 characters)", "/admin/memories/memoryitem/?q=%E5%92%96%E5%95%A1"),
        ("search '去东京出差' (5 characters)", "/admin/memories/memoryitem/?q=%E5%8E%BB%E4%B8%9C%E4%BA%AC%E5%87%BA%E5%B7%AE"),
        ("page 200 of the changelist", "/admin/memories/memoryitem/?p=200"),
        ("review queue", "/admin/memories/reviewitem/"),
        ("dashboard", "/admin/memories/memoryitem/dashboard/"),
    ]
    print(f"{'view':<72} {'median ms':>10} {'queries':>8} {'kB':>7}")
    for label, url in views:
        median, queries, size = measure(client, url)
        print(f"{label:<72} {median * 1000:>10.1f} {queries:>8} {size / 1024:>7.0f}")


if __name__ == "__main__":
    main()
