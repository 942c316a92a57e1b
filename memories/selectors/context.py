"""Which memories go into a prompt: the visible scopes merged, each candidate
scored by a strategy blended with relevance to a query, then packed greedily
under a token budget. Every choice carries its reasons (score parts, tokens)
and what did not fit is reported too.

Only memories in force are candidates: status `active` and lifecycle `active`
(never `pending` ones awaiting review, nor `compacted` or `deprecated`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Q
from django.utils import timezone

from memories.extraction.text import stems
from memories.llm.tokens import count_tokens
from memories.models import LifecycleStatus, MemoryItem, MemoryType, Scope, Status, SummaryTier

STRATEGIES = ("importance", "balanced", "dual-summary")
# Recency halves every two weeks: last week's preference beats last quarter's.
RECENCY_HALF_LIFE_DAYS = 14.0
# Weight of relevance to the query in the blended score. Half: a memory that
# answers the question should beat an important one that does not, but an
# unimportant one that merely shares a word should not beat everything.
RELEVANCE_WEIGHT = 0.5
BALANCED_WEIGHTS = {"importance": 0.5, "recency": 0.3, "confidence": 0.2}
OMITTED_REPORT_LIMIT = 50
_FIELDS = ("id", "scope", "scope_id", "type", "summary_tier", "content", "fact_key", "importance", "confidence",
           "token_count_estimate", "coverage_start_floor_no", "coverage_end_floor_no", "created_at")


@dataclass
class Candidate:
    item: MemoryItem
    tokens: int
    parts: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    group: int = 1  # dual-summary: 0 = the summaries it always puts first

    def explain(self, *, with_content: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.item.pk,
            "type": self.item.type,
            "summary_tier": self.item.summary_tier,
            "scope": self.item.scope,
            "tokens": self.tokens,
            "score": {**{k: round(v, 4) for k, v in self.parts.items()}, "total": round(self.score, 4)},
        }
        if with_content:
            out["content"] = self.item.content
            if self.item.fact_key:
                out["fact_key"] = self.item.fact_key
        return out


@dataclass
class Selection:
    strategy: str
    budget: int
    injected: list[Candidate]
    omitted: list[Candidate]
    tokens_used: int
    candidates: int


def visible_scopes(*, conversation, branch_scope_id: str | None, main_branch_scope_id: str | None = None) -> Q:
    """With a branch: global + that branch + floors of this conversation;
    without one (spec 003's older callers): global + chat + floors, plus the
    main branch's memories when `main_branch_scope_id` is given: the pipeline
    extracts into branch scopes, and a caller that names no branch reads the
    main line of the conversation."""
    from conversations.models import Message

    floors = Q(scope=Scope.FLOOR, scope_id__in=Message.objects.filter(conversation=conversation).values("id"))
    if branch_scope_id is not None:
        return Q(scope=Scope.GLOBAL) | Q(scope=Scope.BRANCH, scope_id=branch_scope_id) | floors
    visible = Q(scope=Scope.GLOBAL) | Q(scope=Scope.CHAT, scope_id=conversation.external_id) | floors
    if main_branch_scope_id is not None:
        visible |= Q(scope=Scope.BRANCH, scope_id=main_branch_scope_id)
    return visible


def _recency(created_at: datetime, now: datetime) -> float:
    age_days = max((now - created_at).total_seconds(), 0) / 86400
    return math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def _relevance(queryset, query: str) -> dict[str, float]:
    """Full-text relevance of each candidate to the query, scaled to 0..1.

    PostgreSQL ranks in the database (pg_trgm `word_similarity`, via the
    search module). On SQLite the FTS5 rank is a correlated subquery per row,
    which takes minutes over 10,000 candidates; there the candidates' terms are
    matched in Python instead, weighted by inverse document frequency, in one
    pass over the rows."""
    from django.db import connection

    from memories.search import search_rank

    if not query.strip():
        return {}
    if connection.vendor == "postgresql":
        ranked = search_rank(queryset, query, alias="relevance").filter(relevance__gt=0).values_list("pk", "relevance")
        scores = {pk: float(value or 0) for pk, value in ranked}
    else:
        scores = _idf_overlap(queryset.values_list("pk", "content"), query)
    top = max(scores.values(), default=0.0)
    return {pk: value / top for pk, value in scores.items()} if top > 0 else {}


def _idf_overlap(rows, query: str) -> dict[str, float]:
    wanted = stems(query)
    if not wanted:
        return {}
    matched: list[tuple[str, frozenset[str]]] = []
    document_frequency: dict[str, int] = dict.fromkeys(wanted, 0)
    total = 0
    for pk, content in rows.iterator(chunk_size=2000):
        total += 1
        hits = stems(content) & wanted
        if hits:
            matched.append((pk, hits))
            for term in hits:
                document_frequency[term] += 1
    idf = {term: math.log(1 + total / (1 + df)) for term, df in document_frequency.items()}
    return {pk: sum(idf[t] for t in hits) for pk, hits in matched}


def memory_select(
    *,
    workspace,
    scopes: Q,
    query: str = "",
    strategy: str = "balanced",
    budget: int = 1000,
    semantic: dict[str, float] | None = None,
    now: datetime | None = None,
) -> Selection:
    """Pick memories for a prompt. `semantic` (id -> similarity 0..1), when an
    embedding provider gave one, is averaged with the full-text relevance."""
    now = now or timezone.now()
    queryset = MemoryItem.objects.filter(workspace=workspace, status=Status.ACTIVE,
                                         lifecycle_status=LifecycleStatus.ACTIVE).filter(scopes)
    queryset = queryset.exclude(type=MemoryType.DOCUMENT)
    relevance = _relevance(queryset, query)
    if semantic:
        for pk, value in semantic.items():
            relevance[pk] = (relevance.get(pk, 0.0) + value) / 2
    use_relevance = bool(query.strip())
    candidates: list[Candidate] = []
    for item in queryset.only(*_FIELDS).iterator(chunk_size=2000):
        tokens = item.token_count_estimate or count_tokens(item.content)
        parts = {"importance": item.importance, "recency": _recency(item.created_at, now),
                 "confidence": item.confidence}
        if strategy == "balanced":
            base = sum(BALANCED_WEIGHTS[k] * parts[k] for k in BALANCED_WEIGHTS)
        else:
            base = item.importance
        parts["base"] = base
        score = base
        if use_relevance:
            parts["relevance"] = relevance.get(item.pk, 0.0)
            score = (1 - RELEVANCE_WEIGHT) * base + RELEVANCE_WEIGHT * parts["relevance"]
        candidates.append(Candidate(item=item, tokens=tokens, parts=parts, score=score))

    if strategy == "dual-summary":
        _dual_summary_groups(candidates)
    candidates.sort(key=lambda c: (c.group, -c.score, c.item.pk))
    injected: list[Candidate] = []
    omitted: list[Candidate] = []
    used = 0
    for candidate in candidates:
        if candidate.group == 2:
            continue  # dual-summary: micros already folded into the macro
        if used + candidate.tokens <= budget:
            injected.append(candidate)
            used += candidate.tokens
        else:
            omitted.append(candidate)
    if strategy == "dual-summary":
        # Summaries read in time order: the macro, then the micros after it.
        head = sorted((c for c in injected if c.group == 0),
                      key=lambda c: (c.item.summary_tier != SummaryTier.MACRO, c.item.coverage_start_floor_no or 0))
        injected = head + [c for c in injected if c.group != 0]
    return Selection(strategy=strategy, budget=budget, injected=injected, omitted=omitted, tokens_used=used,
                     candidates=len(candidates))


def _dual_summary_groups(candidates: list[Candidate]) -> None:
    """The latest macro of each scope and the micros after its coverage come
    first (group 0); older micros are covered by the macro (group 2, skipped);
    facts and open loops follow by score (group 1)."""
    latest_macro: dict[tuple[str, str], Candidate] = {}
    for c in candidates:
        if c.item.type == MemoryType.SUMMARY and c.item.summary_tier == SummaryTier.MACRO:
            key = (c.item.scope, c.item.scope_id)
            if key not in latest_macro or c.item.created_at > latest_macro[key].item.created_at:
                latest_macro[key] = c
    for c in candidates:
        if c.item.type != MemoryType.SUMMARY:
            continue
        macro = latest_macro.get((c.item.scope, c.item.scope_id))
        if c is macro:
            c.group = 0
        elif c.item.summary_tier == SummaryTier.MACRO:
            c.group = 2
        elif macro is None or (c.item.coverage_start_floor_no or 0) > (macro.item.coverage_end_floor_no or 0):
            c.group = 0
        else:
            c.group = 2
