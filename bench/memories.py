"""Memory item benchmark (in process, through the selectors and services).

Prints:
- list time with three filters, and with `q` (ASCII, 3+ Chinese characters and
  a 2-character Chinese word) over 100,000 memories of one workspace, as the
  API runs it (count + first page of 20); on PostgreSQL the plan line that
  shows which index answered, on SQLite the FTS5 / scan line;
- write throughput with versioning (the service: item + version row in one
  transaction per write) as a ratio to the same writes without it (the same
  row insert or update, one transaction per write, no version row).

Database: a fresh SQLite file under MEMORY_VAR_DIR (default), or, when
DATABASE_URL is set, a PostgreSQL database named `bench_memories` on that
server. Run: `.venv/bin/python bench/memories.py`.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import prepare_database  # noqa: E402

MEMORIES = 100_000
INSERT_BATCH = 2_000
SAMPLES = 15
WRITES = 1_000


prepare_database("memories")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from accounts.actors import Actor  # noqa: E402
from accounts.models import Workspace  # noqa: E402
from memories.models import MemoryItem  # noqa: E402
from memories.selectors.items import memory_item_list  # noqa: E402
from memories.services.items import (  # noqa: E402
    memory_item_create,
    memory_item_update,
    memory_redact_and_replace,
)
from memories.services.versioning import content_fingerprint  # noqa: E402
from memory_project.tokens import estimate_tokens  # noqa: E402

WORDS_EN = [
    "user",
    "prefers",
    "tea",
    "coffee",
    "meeting",
    "invoice",
    "travel",
    "hotel",
    "flight",
    "budget",
    "project",
    "deadline",
    "report",
]
WORDS_ZH = [
    "用户",
    "喜欢",
    "咖啡",
    "喝茶",
    "会议",
    "发票",
    "旅行",
    "酒店",
    "航班",
    "预算",
    "项目",
    "截止",
    "报告",
    "的",
]


def _text(rng: random.Random) -> str:
    words = rng.choices(WORDS_ZH if rng.random() < 0.5 else WORDS_EN, k=rng.randint(8, 24))
    joiner = "" if words[0] in WORDS_ZH else " "
    # A rare Chinese tail (3 random CJK characters) so that selective Chinese
    # queries exist, as in real data; the common words make unselective ones.
    tail = "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(3))
    return joiner.join(words) + f" #{rng.randint(0, 10**9)} {tail}"


def _seed(workspace: Workspace) -> None:
    rng = random.Random(7)
    types = ["fact", "summary", "open_loop"]
    started = time.perf_counter()
    for start in range(0, MEMORIES, INSERT_BATCH):
        rows = []
        for _ in range(min(INSERT_BATCH, MEMORIES - start)):
            content = _text(rng)
            sha, size = content_fingerprint(content)
            item_type = rng.choice(types)
            rows.append(
                MemoryItem(
                    workspace=workspace,
                    scope="chat",
                    scope_id=f"conv-{rng.randint(0, 199)}",
                    type=item_type,
                    summary_tier="micro" if item_type == "summary" else None,
                    fact_key=f"key {rng.randint(0, 5000)}" if item_type == "fact" else None,
                    content=content,
                    content_sha256=sha,
                    content_size_bytes=size,
                    importance=round(rng.random(), 3),
                    confidence=round(rng.random(), 3),
                    token_count_estimate=estimate_tokens(content),
                )
            )
        with transaction.atomic():
            MemoryItem.objects.bulk_create(rows)
    with connection.cursor() as cursor:
        # Planner statistics, as a running database would have them.
        cursor.execute("ANALYZE memories_memoryitem" if connection.vendor == "postgresql" else "ANALYZE")
    print(f"seeded {MEMORIES:,} memories in {time.perf_counter() - started:.1f} s")


def _time_list(workspace: Workspace, filters: dict[str, str]) -> tuple[float, int]:
    timings = []
    total = 0
    for _ in range(SAMPLES):
        started = time.perf_counter()
        queryset = memory_item_list(workspace=workspace, filters=filters)
        total = queryset.count()
        list(queryset[:20])
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings), total


def _plan(workspace: Workspace, filters: dict[str, str], *, count: bool = False) -> str:
    """The plan's scan lines for the first page, or (`count`) for the count query."""
    queryset = memory_item_list(workspace=workspace, filters=filters)
    queryset = queryset.order_by().values("pk") if count else queryset[:20]
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"EXPLAIN {sql}", params)
            lines = [row[0].strip() for row in cursor.fetchall()]
            keep = [line for line in lines if "Index" in line or "Scan" in line]
        else:
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            lines = [str(row[-1]) for row in cursor.fetchall()]
            keep = lines
    return " | ".join(keep[:4])


def bench_lists(workspace: Workspace) -> None:
    sample = MemoryItem.objects.filter(workspace=workspace).order_by("pk").values_list("content", flat=True)[500]
    rare_zh = sample[-3:]
    cases = [
        ("3 filters (scope, scope_id, type)", {"scope": "chat", "scope_id": "conv-17", "type": "fact"}),
        (
            "3 filters (scope_id, type, importance_min)",
            {"scope_id": "conv-17", "type": "fact", "importance_min": "0.5"},
        ),
        ("q ASCII 'invoice travel'", {"q": "invoice travel"}),
        ("q Chinese '发票旅行' (4 chars, trigram)", {"q": "发票旅行"}),
        ("q Chinese '咖啡' (2 chars, LIKE)", {"q": "咖啡"}),
        (f"q rare Chinese '{rare_zh}' (3 chars)", {"q": rare_zh}),
        ("q rare '#12345' + type=fact", {"q": "#12345", "type": "fact"}),
    ]
    for label, filters in cases:
        median_ms, total = _time_list(workspace, filters)
        print(f"list {label:45s} {median_ms:8.1f} ms/query  ({total:,} matches)")
        print(f"    page plan:  {_plan(workspace, filters)}")
        print(f"    count plan: {_plan(workspace, filters, count=True)}")


def bench_writes(workspace: Workspace) -> None:
    actor = Actor.for_api_key("apikey_bench")
    rng = random.Random(11)
    contents = [_text(rng) for _ in range(WRITES)]

    started = time.perf_counter()
    for content in contents:
        with transaction.atomic():
            sha, size = content_fingerprint(content)
            MemoryItem.objects.create(
                workspace=workspace,
                scope="chat",
                scope_id="conv-raw",
                type="fact",
                content=content,
                content_sha256=sha,
                content_size_bytes=size,
                token_count_estimate=estimate_tokens(content),
            )
    raw_create = time.perf_counter() - started

    started = time.perf_counter()
    created = []
    for content in contents:
        created.append(
            memory_item_create(
                workspace=workspace, actor=actor, scope="chat", scope_id="conv-svc", type="fact", content=content
            ).pk
        )
    service_create = time.perf_counter() - started

    raw_ids = list(MemoryItem.objects.filter(scope_id="conv-raw").values_list("pk", flat=True))
    started = time.perf_counter()
    for memory_id in raw_ids:
        with transaction.atomic():
            item = MemoryItem.objects.select_for_update().get(pk=memory_id)
            item.importance = 0.25
            item.version += 1
            item.save(update_fields=["importance", "version", "updated_at"])
    raw_update = time.perf_counter() - started

    started = time.perf_counter()
    for memory_id in created:
        memory_item_update(workspace=workspace, actor=actor, memory_id=memory_id, changes={"importance": 0.25})
    service_update = time.perf_counter() - started

    for label, raw, service in (("create", raw_create, service_create), ("update", raw_update, service_update)):
        print(
            f"write {label}: {WRITES / service:7.0f}/s with versioning vs {WRITES / raw:7.0f}/s without "
            f"-> versioned takes {service / raw:.2f}x the time"
        )


def bench_redaction(workspace: Workspace) -> None:
    """Redact-and-replace on one memory of the big workspace: the cost includes
    scrubbing the admin log and jobs and, on SQLite, merging the FTS5 index."""
    actor = Actor.for_user(1)
    item = memory_item_create(
        workspace=workspace, actor=actor, scope="chat", scope_id="conv-x", type="fact", content="secret 机密 4242"
    )
    started = time.perf_counter()
    memory_redact_and_replace(workspace=workspace, actor=actor, memory_id=item.pk, content="[redacted]")
    print(f"redact-and-replace over {MEMORIES:,} memories: {(time.perf_counter() - started) * 1000:.0f} ms")


def main() -> None:
    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}")
    workspace = Workspace.objects.create(name="Bench", slug="bench")
    _seed(workspace)
    bench_lists(workspace)
    bench_writes(workspace)
    bench_redaction(workspace)


if __name__ == "__main__":
    main()
