"""Context assembly at scale: 10,000 memories and 10,000 messages in one
conversation's scope, every one of them indexed for recall.

Prints p50 / p95 of `context_assemble` (in process, as the view calls it) for
each strategy, with BM25 alone and with dense vectors fused in (the offline
model's real vectors), and the ingest cost of the offline embedding model per
message passage.

Run: .venv/bin/python bench/context.py  (SQLite file under MEMORY_VAR_DIR), or
with DATABASE_URL=postgres://postgres@127.0.0.1:5432/x for a fresh
`bench_context` database on that server. It stops by itself.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import prepare_database  # noqa: E402

prepare_database("context")
os.environ["EMBEDDING_PROVIDER"] = "none"  # vectors are written below, on purpose

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402

from accounts.models import Workspace  # noqa: E402
from conversations.models import Branch, Conversation, Message  # noqa: E402
from memories.models import MemoryItem  # noqa: E402
from memories.recall import embeddings  # noqa: E402
from memories.recall.context import ContextRequest, context_assemble  # noqa: E402
from memories.recall.index import memory_entries_rebuild, passage_entries_rebuild  # noqa: E402
from memories.recall.models import RecallEntry  # noqa: E402
from memories.services.scopes import branch_scope_id  # noqa: E402
from memories.services.versioning import content_fingerprint  # noqa: E402

call_command("migrate", verbosity=0)

N_MEMORIES = 10_000
N_MESSAGES = 10_000
ROUNDS = 15
EMBEDDED_SAMPLE = 256
# Vocabulary spread like a long real chat: many names, places and topics, so
# a query's words match a few hundred passages, not a third of them.
PEOPLE = ["Nate", "Joanna", "Maya", "Sam", "Tom", "Lena", "Omar", "Priya", "Kenji", "Ana", "Luis", "Fatima", "Olga",
          "Ravi", "Chloe", "Mateo", "Ingrid", "Kwame", "Yuki", "Hana", "Pedro", "Zara", "Ivan", "Noor", "Elsa",
          "Diego", "Amara", "Felix", "Lucia", "Arjun", "Mei", "Oscar"]
PLACES = ["Lisbon", "Tampa", "Osaka", "Porto", "Denver", "Leeds", "Hangzhou", "Quebec", "Nairobi", "Lima", "Oslo",
          "Austin", "Krakow", "Seville", "Busan", "Perth", "Cusco", "Dublin", "Tbilisi", "Hanoi", "Boston", "Zurich",
          "Accra", "Bergen"]
HOBBIES = ["video games", "pottery", "rock climbing", "the violin", "sourdough baking", "chess", "surfing", "poetry",
           "birdwatching", "salsa dancing", "woodworking", "astronomy", "knitting", "marathon training", "origami",
           "photography", "beekeeping", "calligraphy", "kayaking", "gardening"]
EN = [
    "{p} said the trip to {c} was the best part of the year.",
    "I started learning {h} last month and I practise every evening.",
    "Did you hear that {p} moved to {c} for a new job?",
    "We had dinner near the harbour in {c}, the seafood was great.",
    "My cousin {p} is allergic to peanuts, so we always check menus.",
    "The weather in {c} has been awful all week, rain every day.",
    "Honestly I think {h} is harder than it looks, ask {p}.",
    "Let's meet on Friday at 6 to plan the {c} weekend.",
    "{p} lent me a book about {h}; I'm halfway through it.",
    "The conference in {c} got moved to October, {p} told me.",
    "I bought new gear for {h} yesterday, it cost about {n} dollars.",
    "{p}'s daughter just turned {n} and loves {h}.",
    "Remember the flat in {c}? The landlord finally fixed the heating.",
    "My manager {p} wants the quarterly report by Thursday.",
    "We watched a documentary about {h} with {p} last night.",
    "The train from {c} was delayed by {n} minutes again.",
]
ZH = ["{p}说去{c}旅行是今年最开心的事。", "我最近在学{h}，每天晚上练习。", "周末我们打算去{c}爬山。", "我表哥对花生过敏，点菜要小心。",
      "{p}下个月要搬到{c}工作。", "昨天和{p}一起看了关于{h}的纪录片。"]
QUERIES = [
    "Who is allergic to peanuts?", "When did I start learning pottery?", "Which city did Nate move to?",
    "What was the weather like in Osaka?", "Where are we going for the weekend?", "去杭州爬山是哪天？",
    "What does Priya think about chess?", "Which trip was the best part of the year?",
]


def _fill(n_messages: int, n_memories: int):
    workspace = Workspace.objects.create(name="bench", slug=f"bench-{int(time.time())}")
    conversation = Conversation.objects.create(workspace=workspace, external_id="big", message_count=n_messages,
                                               user_id="u1")
    branch = Branch.objects.create(conversation=conversation, name="main", next_floor_no=n_messages + 1)
    messages = []
    for i in range(n_messages):
        templates = ZH if i % 10 == 9 else EN
        text = templates[i % len(templates)].format(p=PEOPLE[(i * 7) % len(PEOPLE)], c=PLACES[(i * 5) % len(PLACES)],
                                                    h=HOBBIES[(i * 3) % len(HOBBIES)], n=i % 97)
        messages.append(Message(workspace=workspace, conversation=conversation, branch=branch, floor_no=i + 1,
                                role="user" if i % 2 == 0 else "assistant", content=f"{text} (#{i})",
                                token_estimate=len(text) // 3))
    with transaction.atomic():
        Message.objects.bulk_create(messages, batch_size=2000)
        for start in range(0, n_messages, 2000):
            passage_entries_rebuild(workspace_id=workspace.pk, messages=messages[start:start + 2000])
    scope_id = branch_scope_id("big", "main")
    items = []
    for i in range(n_memories):
        text = (f"{PEOPLE[(i * 11) % len(PEOPLE)]} likes {HOBBIES[(i * 13) % len(HOBBIES)]} and visited "
                f"{PLACES[(i * 17) % len(PLACES)]} in {2015 + i % 11} (fact {i})")
        sha, size = content_fingerprint(text)
        items.append(MemoryItem(workspace=workspace, scope="user" if i % 3 == 0 else "branch",
                                scope_id="u1" if i % 3 == 0 else scope_id, type="fact", content=text,
                                content_sha256=sha, content_size_bytes=size, fact_key=f"user.k{i}",
                                importance=(i % 10) / 10, token_count_estimate=16, sources=[messages[i].pk]))
    with transaction.atomic():
        MemoryItem.objects.bulk_create(items, batch_size=2000)
        for start in range(0, n_memories, 2000):
            memory_entries_rebuild(items[start:start + 2000])
    return workspace


def _embed_all(workspace, provider) -> None:
    """Vectors from the offline model for every entry. Embedding 20,000
    texts takes the model tens of minutes on 2 cores, so the model embeds a
    sample of the entries' texts and the rest reuse those vectors in turn:
    this measures the cost of dense ranking at this size, not its quality
    (bench/recall.py measures that)."""
    from memories.recall.dense import _entry_texts

    entries = list(RecallEntry.objects.filter(workspace=workspace).only(
        "id", "workspace_id", "kind", "memory_id", "message_id", "start_char", "end_char"))
    sample = _entry_texts(entries[:: max(1, len(entries) // EMBEDDED_SAMPLE)][:EMBEDDED_SAMPLE])
    vectors = provider.embed_documents(sample)
    with transaction.atomic():
        for i, entry in enumerate(entries):
            entry.embedding = embeddings.vector_to_bytes(vectors[i % len(vectors)])
            entry.embedding_model = provider.name
        RecallEntry.objects.bulk_update(entries, ["embedding", "embedding_model"], batch_size=2000)


def _measure(workspace, label: str) -> None:
    for strategy in ("balanced", "importance", "dual-summary"):
        timings = []
        injected = 0
        for r in range(ROUNDS):
            query = QUERIES[r % len(QUERIES)]
            started = time.perf_counter()
            body = context_assemble(workspace=workspace, external_id="big", request=ContextRequest(
                strategy=strategy, query=query, memory_token_budget=1000))
            timings.append((time.perf_counter() - started) * 1000)
            injected += len(body["memory"]["injected"])
        timings.sort()
        p95 = timings[min(len(timings) - 1, int(len(timings) * 0.95))]
        print(f"context {label} {strategy:<12} p50 {statistics.median(timings):6.1f} ms  p95 {p95:6.1f} ms  "
              f"({injected / ROUNDS:.0f} injected per call)")


def main() -> None:
    from memories.llm.tokens import count_tokens

    count_tokens("warm up")
    vendor = "postgresql" if os.environ.get("DATABASE_URL") else "sqlite"
    started = time.perf_counter()
    workspace = _fill(N_MESSAGES, N_MEMORIES)
    if vendor == "postgresql":
        # Production tables have statistics (autovacuum analyses them); a bulk
        # load does not until it runs, and the planner then guesses badly.
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    entries = RecallEntry.objects.filter(workspace=workspace).count()
    print(f"database {vendor}; {N_MEMORIES} memories + {N_MESSAGES} messages -> {entries} recall entries "
          f"indexed in {time.perf_counter() - started:.1f} s")
    _measure(workspace, "bm25       ")

    settings.EMBEDDING_PROVIDER = "offline"
    provider = embeddings.get_embedding_provider()
    sample = [m.content for m in Message.objects.filter(workspace=workspace).order_by("floor_no")[:64]]
    provider.embed_documents(sample[:4])  # load the model
    started = time.perf_counter()
    provider.embed_documents(sample)
    per_text = (time.perf_counter() - started) / len(sample) * 1000
    print(f"embedding cost at ingest ({provider.name}): {per_text:.1f} ms per message passage "
          f"({1000 / per_text:.0f} passages/s on {os.cpu_count()} cores)")
    _embed_all(workspace, provider)
    provider.embed_query("warm up")
    _measure(workspace, "bm25+dense ")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
