"""The candidates of a recall: the memories of the visible scopes, as rows
read in the database's order of importance (pinned, orientation, or without a
query the prior alone), each with its prior and the line it renders as.
"""

# The memory rows' union (`_first_by_importance`) is built from model metadata
# (table and column names, quoted by the backend); every value is a bound
# parameter.
# ruff: noqa: S608
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import OuterRef, Q

from conversations.selectors.references import message_in_conversation, message_in_conversation_sql
from memories.models import LifecycleStatus, MemoryItem, MemoryType, Scope, Status, SummaryTier
from memories.recall.models import RecallKind
from memory_project.db import column, model_rows, table

# Recency halves every two weeks: last week's preference beats last quarter's.
RECENCY_HALF_LIFE_DAYS = 14.0
BALANCED_WEIGHTS = {"importance": 0.5, "recency": 0.3, "confidence": 0.2}
# With a query, the final score is mostly relevance; the prior (importance,
# recency, confidence by strategy) separates near-equals.
RELEVANCE_WEIGHT = 0.85
# A memory this important is injected even when the query does not touch it
# (a user's name, a hard constraint such as an allergy); pinned memories take
# at most this share of the budget.
PIN_IMPORTANCE = 0.9
# Passages take the prior of an ordinary memory.
PASSAGE_PRIOR = 0.5
# How many ranked candidates are read (rows fetched) to fill a budget: enough
# for a 2,000-token budget of short evidence, bounded whatever the scope's size.
MAX_EXAMINED = 400
# Memory rows read to score the best memory hits (their prior needs the row).
MAX_MEMORY_ROWS = 100
# Once the budget is nearly full, this many candidates in a row that do not
# fit end the packing: what follows ranks lower and is no shorter on average.
MAX_MISSES = 12
# Without a query, the memories read in prior order.
NO_QUERY_CANDIDATES = 300
# Pinned memories read, most important first (they fill at most
# PINNED_BUDGET_SHARE of the budget).
PINNED_CANDIDATES = 50
_MEMORY_FIELDS = ("id", "scope", "scope_id", "type", "summary_tier", "content", "fact_key", "importance",
                  "confidence", "status", "lifecycle_status", "coverage_start_floor_no", "coverage_end_floor_no",
                  "source_message_id", "sources", "source_memory_ids", "created_at", "last_used_at")
_IN_FORCE = (LifecycleStatus.ACTIVE, LifecycleStatus.COMPACTED)


# Identity equality: `PassageTexts` finds a candidate in the ranked list,
# which must not compare every field (dicts included) of each one it passes.
@dataclass(eq=False)
class Candidate:
    kind: str
    key: str  # a memory id, or "<message id>:<offset>" for a passage
    relevance: float = 0.0
    prior: float = 0.0
    importance: float = 0.5
    score: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)
    group: int = 1  # 0: placed first (pinned, orientation); 1: by score
    line: str = ""
    tokens: int = 0
    memory: dict[str, Any] | None = None
    passage: dict[str, Any] | None = None
    reason: str = ""
    day: str = ""  # a passage's day, written once above its group

    @property
    def sources(self) -> list[str]:
        if self.passage is not None:
            return [self.passage["message_id"]]
        assert self.memory is not None
        return list(self.memory.get("sources") or ([self.memory["source_message_id"]]
                                                    if self.memory.get("source_message_id") else []))

    def explain(self, *, with_content: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "id": self.key, "tokens": self.tokens, "reason": self.reason,
                               "score": {**{k: round(v, 4) for k, v in self.parts.items()},
                                         "total": round(self.score, 4)},
                               "sources": self.sources}
        if self.memory is not None:
            m = self.memory
            out.update(type=m["type"], summary_tier=m["summary_tier"], scope=m["scope"],
                       lifecycle_status=m["lifecycle_status"])
            if m.get("source_memory_ids"):
                out["source_memory_ids"] = list(m["source_memory_ids"])
            if with_content:
                out["content"] = m["content"]
                if m["fact_key"]:
                    out["fact_key"] = m["fact_key"]
        else:
            p = self.passage
            assert p is not None
            out.update(source_message_id=p["message_id"], floor_no=p["floor_no"])
            if "created_at" in p:  # its text was read (every injected passage's is)
                out.update(role=p["role"], created_at=int(p["created_at"].timestamp() * 1000))
                if with_content:
                    out["content"] = p["text"]
        return out


@dataclass(frozen=True)
class RecallScope:
    """Where recall looks: memory scope tokens and, for a conversation, its
    passages (limited to what `shows(branch_id, floor_no)` lets through)."""

    workspace_id: str
    memory_tokens: list[str]
    passage_token: str | None = None
    shows: Callable[[str, int], bool] | None = None
    exclude_message_ids: frozenset[str] = frozenset()
    # The same scopes for the paths that read memories by their rows (no
    # query, pinned, orientation): (scope, scope_id) pairs, scope_id None
    # for every memory of the scope (global); and the conversation whose
    # messages' floor memories are visible.
    memory_scopes: tuple[tuple[str, str | None], ...] = ()
    floor_conversation: int | None = None

    @property
    def tokens(self) -> list[str]:
        return self.memory_tokens + ([self.passage_token] if self.passage_token else [])

    @property
    def memory_filter(self) -> Q | None:
        """Every scope's memories as a Q over MemoryItem."""
        if not self.memory_scopes and self.floor_conversation is None:
            return None
        combined = Q()
        for scope, scope_id in self.memory_scopes:
            combined |= Q(scope=scope) if scope_id is None else Q(scope=scope, scope_id=scope_id)
        if self.floor_conversation is not None:
            # A floor memory is visible where its message is: checked per
            # row (EXISTS on the message's primary key), never by listing
            # the conversation's messages.

            combined |= Q(message_in_conversation(message_id=OuterRef("scope_id"),
                                                  conversation_id=self.floor_conversation),
                          scope=Scope.FLOOR)
        return combined


def _recency(created_at: datetime, now: datetime) -> float:
    age_days = max((now - created_at).total_seconds(), 0) / 86400
    return math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def _prior(memory: dict[str, Any], strategy: str, now: datetime) -> tuple[float, dict[str, float]]:
    parts = {"importance": memory["importance"], "recency": _recency(memory["created_at"], now),
             "confidence": memory["confidence"]}
    if strategy == "balanced":
        return sum(BALANCED_WEIGHTS[k] * parts[k] for k in BALANCED_WEIGHTS), parts
    return memory["importance"], parts


def memory_line(memory: dict[str, Any]) -> str:
    kind = memory["type"]
    if kind == MemoryType.SUMMARY:
        start, end = memory["coverage_start_floor_no"], memory["coverage_end_floor_no"]
        span = f" of floors {start}-{end}" if start and end else ""
        label = ("overview" if memory["summary_tier"] == SummaryTier.MACRO else "summary") + span
    elif kind == MemoryType.OPEN_LOOP:
        label = "open task"
    else:
        label = "fact"
    if memory["scope"] == Scope.GLOBAL:
        label += ", global"
    elif memory["scope"] == Scope.USER:
        # A fact about someone the user named (`person.<name>.*`: a partner's
        # allergy) is kept with the user's memories but is not about them.
        label += ", about someone this user knows" if (memory.get("fact_key") or "").startswith("person.") \
            else ", about this user"
    return f"- [{label}] {' '.join(str(memory['content']).split())}"


def memory_rows(ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    rows = MemoryItem.objects.filter(pk__in=list(ids), status=Status.ACTIVE, lifecycle_status__in=_IN_FORCE) \
        .exclude(type=MemoryType.DOCUMENT).values(*_MEMORY_FIELDS)
    return {row["id"]: row for row in rows}


def _first_by_importance(scope: RecallScope, limit: int, *, min_importance: float | None = None
                         ) -> list[dict[str, Any]]:
    """The scopes' active memories (documents aside) with the highest
    importance, newest first among equals: at most `limit` rows. Each scope is
    read on its own and the per-scope bests merged: a scope with an id (user,
    chat, branch) is read straight off its index range in order
    (`mem_ws_scope_importance`), where an OR of the scopes would read and sort
    every matching row of a 10,000-memory branch to keep 50. Global (any
    scope id) and floor memories (any message's, checked per row) are still
    sorted, as before."""
    floor = scope.floor_conversation is not None
    if not scope.memory_scopes and not floor:
        return []
    common = [scope.workspace_id, Status.ACTIVE, LifecycleStatus.ACTIVE, MemoryType.DOCUMENT,
              *([] if min_importance is None else [min_importance])]
    params: list[Any] = []
    for scope_name, scope_id in scope.memory_scopes:
        params += [*common, scope_name, *([] if scope_id is None else [scope_id]), limit]
    if floor:
        params += [*common, Scope.FLOOR, scope.floor_conversation, limit]
    sql = _first_by_importance_sql(tuple(scope_id is not None for _, scope_id in scope.memory_scopes), floor,
                                   min_importance is not None, connection.vendor)
    # Prepared: planning the union took longer than running it.
    return model_rows(MemoryItem, _MEMORY_FIELDS, sql, [*params, limit])


@functools.lru_cache(maxsize=64)
def _first_by_importance_sql(with_ids: tuple[bool, ...], floor: bool, min_importance: bool, vendor: str) -> str:
    """`_first_by_importance`'s statement for its shape: per scope whether it
    names an id, whether floor memories are read, whether importance has a
    floor (`vendor` for the quoting). Written out once per shape: the ORM took
    longer to build this union than the database to run it."""

    t = table(MemoryItem)
    col = functools.partial(column, MemoryItem)
    common = (f"{col('workspace')} = %s AND {col('status')} = %s AND {col('lifecycle_status')} = %s"
              f" AND {col('type')} <> %s" + (f" AND {col('importance')} >= %s" if min_importance else ""))
    conditions = [f"{col('scope')} = %s" + (f" AND {col('scope_id')} = %s" if with_id else "") for with_id in with_ids]
    if floor:
        conditions.append(f"{col('scope')} = %s AND " + message_in_conversation_sql(f"{t}.{col('scope_id')}"))
    names = ", ".join(col(name) for name in _MEMORY_FIELDS)
    order = f"{col('importance')} DESC, {col('created_at')} DESC"
    # Each part in a subquery of its own: SQLite takes no ORDER BY or LIMIT on
    # a UNION's operands.
    parts = [f"SELECT * FROM (SELECT {names} FROM {t} WHERE {common} AND {condition}"
             f" ORDER BY {order} LIMIT %s) AS best_{index}" for index, condition in enumerate(conditions)]
    return " UNION ALL ".join(parts) + f" ORDER BY {order} LIMIT %s"


def pinned_rows(scope: RecallScope, exclude: set[str]) -> list[dict[str, Any]]:
    rows = _first_by_importance(scope, PINNED_CANDIDATES, min_importance=PIN_IMPORTANCE)
    return [row for row in rows if row["id"] not in exclude]


def orientation_rows(scope: RecallScope) -> list[dict[str, Any]]:
    """dual-summary's head: the latest macro of each summarised scope, then the
    micro summaries after its coverage, in floor order."""
    if scope.memory_filter is None:
        return []
    summaries = list(
        MemoryItem.objects.filter(workspace_id=scope.workspace_id, type=MemoryType.SUMMARY, status=Status.ACTIVE,
                                  lifecycle_status=LifecycleStatus.ACTIVE).filter(scope.memory_filter)
        .order_by("coverage_start_floor_no", "created_at").values(*_MEMORY_FIELDS)[:200])
    latest_macro: dict[tuple[str, str], dict[str, Any]] = {}
    for row in summaries:
        if row["summary_tier"] == SummaryTier.MACRO:
            key = (row["scope"], row["scope_id"])
            if key not in latest_macro or row["created_at"] > latest_macro[key]["created_at"]:
                latest_macro[key] = row
    out = []
    for row in summaries:
        macro = latest_macro.get((row["scope"], row["scope_id"]))
        if row is macro or (row["summary_tier"] == SummaryTier.MICRO and (
                macro is None or (row["coverage_start_floor_no"] or 0) > (macro["coverage_end_floor_no"] or 0))):
            out.append(row)
    out.sort(key=lambda r: (r["summary_tier"] != SummaryTier.MACRO, r["coverage_start_floor_no"] or 0))
    return out


def no_query_rows(scope: RecallScope) -> list[dict[str, Any]]:
    return _first_by_importance(scope, NO_QUERY_CANDIDATES)


def memory_candidate(row: dict[str, Any], strategy: str, now: datetime, *, relevance: float,
                      group: int = 1, reason: str) -> Candidate:
    prior, parts = _prior(row, strategy, now)
    score = RELEVANCE_WEIGHT * relevance + (1 - RELEVANCE_WEIGHT) * prior if relevance else prior
    return Candidate(kind=RecallKind.MEMORY, key=row["id"], relevance=relevance, prior=prior,
                     importance=row["importance"], score=score, group=group, memory=row, reason=reason,
                     parts={**parts, "prior": prior, "relevance": relevance}, line=memory_line(row))
