"""Pipeline benchmark: offline extraction throughput on a 10,000-message
conversation, peak memory of the extraction job at 1,000 and 10,000 messages
(tracemalloc; bounded batches keep the ratio near 1), and context assembly
time with 10,000 memories in scope.

Run: .venv/bin/python bench/pipeline.py [--context-only] (SQLite file under
MEMORY_VAR_DIR, or DATABASE_URL for PostgreSQL). The full run takes ~15 minutes
on 2 cores: tracemalloc slows the extraction several times.
"""

from __future__ import annotations

import os
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MEMORY_VAR_DIR", "/tmp/var_bench_pipeline")
Path(os.environ["MEMORY_VAR_DIR"]).mkdir(parents=True, exist_ok=True)
if "DATABASE_URL" not in os.environ:
    os.environ["SQLITE_PATH"] = str(Path(os.environ["MEMORY_VAR_DIR"]) / "bench_pipeline.sqlite3")
    Path(os.environ["SQLITE_PATH"]).unlink(missing_ok=True)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings")
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "0"

import django  # noqa: E402

django.setup()
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402

call_command("migrate", verbosity=0)

from accounts.models import Workspace  # noqa: E402
from conversations.models import Branch, Conversation, Message  # noqa: E402
from memories.models import MemoryItem, MemoryJob, ScopeState  # noqa: E402
from memories.recall.context import ContextRequest, context_assemble  # noqa: E402
from memories.services.pipeline.execute import memory_job_execute  # noqa: E402
from memories.services.scopes import branch_scope_id  # noqa: E402
from memories.services.versioning import content_fingerprint  # noqa: E402

EN = [
    "I live in {city} and I prefer {drink} in the morning.",
    "Please remind me to send the {thing} report before Friday.",
    "The {thing} report is done, I sent it yesterday.",
    "What do you think about the {thing} launch timeline?",
    "My budget is {n} dollars for the {thing} project.",
]
ZH = ["我住在{city}，我喜欢喝{drink}。", "请提醒我周五之前提交{thing}报告。", "{thing}报告已经提交了。", "你觉得{thing}的上线时间怎么样？"]
CITIES = ["Berlin", "Lisbon", "Osaka", "Toronto", "上海", "杭州"]
DRINKS = ["tea", "coffee", "juice", "咖啡", "绿茶"]
THINGS = ["sales", "audit", "design", "hiring", "budget", "roadmap"]


def make_conversation(workspace, cid: str, n: int) -> str:
    """Bulk-insert n messages (the append path is measured elsewhere)."""
    conversation = Conversation.objects.create(workspace=workspace, external_id=cid, message_count=n)
    branch = Branch.objects.create(conversation=conversation, name="main", next_floor_no=n + 1)
    rows = []
    for i in range(n):
        templates = ZH if (i // 200) % 2 else EN
        text = templates[i % len(templates)].format(city=CITIES[i % 6], drink=DRINKS[i % 5], thing=THINGS[i % 6], n=i)
        role = "user" if i % 2 == 0 else "assistant"
        rows.append(Message(workspace=workspace, conversation=conversation, branch=branch, floor_no=i + 1, role=role,
                            content=text if role == "user" else "Noted. " + text, token_estimate=len(text) // 3))
    Message.objects.bulk_create(rows, batch_size=2000)
    scope_id = branch_scope_id(cid, "main")
    ScopeState.objects.create(workspace=workspace, scope="branch", scope_id=scope_id, conversation=conversation,
                              branch=branch)
    return scope_id


def run_extraction(workspace, scope_id: str, *, traced: bool) -> tuple[float, int]:
    """(seconds, peak traced bytes). Throughput is timed untraced: tracemalloc
    slows allocation-heavy Python several times over."""
    job = MemoryJob.objects.create(workspace=workspace, kind="extract", scope="branch", scope_id=scope_id)
    if traced:
        tracemalloc.start()
    started = time.perf_counter()
    memory_job_execute(job_id=job.pk)
    elapsed = time.perf_counter() - started
    peak = 0
    if traced:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    return elapsed, peak


def main() -> None:
    from memories.llm.tokens import count_tokens

    # The BPE tables load once per worker process; load them before measuring.
    count_tokens("warm up")
    workspace = Workspace.objects.create(name="bench", slug=f"bench-{int(time.time())}")
    peaks = {}
    sizes = () if "--context-only" in sys.argv else (1_000, 10_000)
    for n in sizes:
        scope_id = make_conversation(workspace, f"bench-{n}", n)
        _, peak = run_extraction(workspace, scope_id, traced=True)
        peaks[n] = peak
        items = MemoryItem.objects.filter(scope_id=scope_id).count()
        print(f"extraction peak memory, {n:>6} messages: {peak / 1e6:6.1f} MB (tracemalloc), {items} memories written")
    if peaks:
        print(f"peak memory ratio 10,000 / 1,000 messages: {peaks[10_000] / peaks[1_000]:.2f}")
        scope_id = make_conversation(workspace, "bench-throughput", 10_000)
        elapsed, _ = run_extraction(workspace, scope_id, traced=False)
        print(f"extraction throughput, 10,000 messages (untraced): {elapsed:6.1f} s, {10_000 / elapsed:6.0f} floors/s")

    # 10,000 memories in one branch scope for context assembly.
    scope_id = make_conversation(workspace, "ctx", 50)
    now_items = []
    for i in range(10_000):
        text = f"User fact {i}: likes {THINGS[i % 6]} and lives near {CITIES[i % 6]} (note {i})"
        sha, size = content_fingerprint(text)
        now_items.append(MemoryItem(workspace=workspace, scope="branch", scope_id=scope_id, type="fact", content=text,
                                    content_sha256=sha, content_size_bytes=size, fact_key=f"user.k{i}",
                                    importance=(i % 10) / 10, token_count_estimate=14))
    with transaction.atomic():
        MemoryItem.objects.bulk_create(now_items, batch_size=2000)
    from memories.search import sqlite_index_ensure

    sqlite_index_ensure()
    for strategy in ("balanced", "dual-summary"):
        timings = []
        for _ in range(3):
            started = time.perf_counter()
            body = context_assemble(workspace=workspace, external_id="ctx", request=ContextRequest(
                branch="main", strategy=strategy, query="who likes audit near Osaka", memory_token_budget=2000))
            timings.append(time.perf_counter() - started)
        print(f"context assembly, 10,000 memories, {strategy:<12}: best {min(timings) * 1000:7.1f} ms, "
              f"{len(body['memory']['injected'])} injected, {body['memory']['omitted_count']} omitted")


if __name__ == "__main__":
    main()
