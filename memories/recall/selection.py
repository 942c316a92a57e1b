"""What goes into a prompt's memory section: memories and passages of the
conversation's own messages, ranked together and packed under one token budget.

Candidates are the memories of the visible scopes (global, the conversation's
user, the branch or chat, its floors) and the passages of the messages this
branch shows, outside the recent-message window. With a query, only entries
relevant on the absolute scale (`RECALL_MIN_RELEVANCE`, see `ranking`) are
candidates, whatever room is left: when nothing clears it, only pinned
memories (importance >= `PIN_IMPORTANCE`) are injected. Among the relevant,
the rank (BM25 fused with dense similarity when embeddings are on) dominates
and the strategy's prior only orders near-equals. Without a query, the prior
alone orders the memories (passages need a query).

Memories in force are candidates: status `active` with lifecycle `active`, or
`compacted` (a compacted micro summary is still evidence; compaction must not
make the agent forget). Pending memories awaiting review are never candidates.

The budget is honest: the rendered section, header and labels included, is
counted with the real tokenizer and never exceeds it.
"""

# The memory rows' union (`_first_by_importance`) is built from model metadata
# (table and column names, quoted by the backend); every value is a bound
# parameter.
# ruff: noqa: S608
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

import memories.recall.ranking as ranking
from conversations.selectors.messages import message_rows
from memories.llm.tokens import content_text, count_tokens
from memories.models import MemoryType, SummaryTier
from memories.recall.candidates import (
    MAX_EXAMINED,
    MAX_MEMORY_ROWS,
    MAX_MISSES,
    PASSAGE_PRIOR,
    RELEVANCE_WEIGHT,
    Candidate,
    RecallScope,
    memory_candidate,
    memory_rows,
    no_query_rows,
    orientation_rows,
    pinned_rows,
)
from memories.recall.models import RecallKind
from memories.recall.passages import passage_parts

STRATEGIES = ("balanced", "importance", "dual-summary")
SECTION_HEADER = "## Relevant memories"
PINNED_BUDGET_SHARE = 0.25
# dual-summary: the latest macro and the micro summaries after it orient the
# model first, within this share of the budget; evidence fills the rest.
ORIENTATION_BUDGET_SHARE = 0.35
OMITTED_REPORT_LIMIT = 50
# A ranked passage that no longer fits whole is cut to the room left, keeping
# the words around the query's, when at least this many tokens are left:
# otherwise a strong passage would hand its place to weaker entries that only
# happen to be shorter.
MIN_SHORTENED_TOKENS = 16
ELLIPSIS = "…"


@dataclass
class Selection:
    strategy: str
    budget: int
    query: str
    injected: list[Candidate]
    omitted: list[Candidate]
    tokens_used: int
    candidates: int
    text: str = ""  # the rendered section, "" when nothing was injected


def recall_select(*, scope: RecallScope, query: str, strategy: str = "balanced", budget: int = 1000,
                  dense=None, now: datetime | None = None) -> Selection:
    """Rank, then pack greedily under `budget` tokens of rendered section."""
    now = now or timezone.now()
    query = query or ""
    has_query = bool(query.strip())
    head: list[Candidate] = []
    ranked: list[Candidate] = []
    seen: set[str] = set()

    if strategy == "dual-summary":
        for row in orientation_rows(scope):
            head.append(memory_candidate(row, strategy, now, relevance=0.0, group=0, reason="orientation"))
            seen.add(row["id"])

    scored = ranking.rank(workspace_id=scope.workspace_id, scope_tokens=scope.tokens, query=query,
                          dense=dense) if has_query else []
    # Memories need their row for the prior (importance, recency): read the
    # best ones in one query. Passages score without their text; it is read
    # only for those the packing reaches (see `PassageTexts`).
    memory_hits = [s for s in scored if s.hit.kind == RecallKind.MEMORY][:MAX_MEMORY_ROWS]
    memories = memory_rows([s.hit.memory_id for s in memory_hits if s.hit.memory_id not in seen])
    passages_taken = 0
    for s in scored:
        hit = s.hit
        if hit.kind == RecallKind.MEMORY:
            row = memories.get(hit.memory_id)
            if row is None or row["id"] in seen or (row["summary_tier"] == SummaryTier.MACRO
                                                    and strategy != "dual-summary"):
                # A macro orients (dual-summary's head) but never takes the
                # place of the evidence it was compacted from.
                continue
            seen.add(row["id"])
            # The relative rank orders the relevant; the absolute relevance is reported.
            candidate = memory_candidate(row, strategy, now, relevance=s.rank, reason="relevant")
        else:
            key = f"{hit.message_id}:{hit.start_char}"
            if key in seen or passages_taken >= MAX_EXAMINED or hit.message_id in scope.exclude_message_ids or (
                    scope.shows is not None and not scope.shows(hit.branch_id, hit.floor_no)):
                continue
            seen.add(key)
            passages_taken += 1
            score = RELEVANCE_WEIGHT * s.rank + (1 - RELEVANCE_WEIGHT) * PASSAGE_PRIOR
            candidate = Candidate(kind=RecallKind.PASSAGE, key=key, prior=PASSAGE_PRIOR,
                                  score=score, reason="relevant", importance=PASSAGE_PRIOR,
                                  parts={"prior": PASSAGE_PRIOR},
                                  passage={"message_id": hit.message_id, "floor_no": hit.floor_no,
                                           "start_char": hit.start_char, "end_char": hit.end_char})
        candidate.relevance = s.relevance
        candidate.parts.update(relevance=s.relevance, rank=s.rank, bm25=s.bm25, terms=s.terms)
        if s.dense is not None:
            candidate.parts["dense"] = s.dense
        ranked.append(candidate)

    if has_query:
        for row in pinned_rows(scope, seen):
            head.append(memory_candidate(row, strategy, now, relevance=0.0, group=0, reason="pinned"))
            seen.add(row["id"])
    else:
        for row in no_query_rows(scope):
            if row["id"] not in seen and row["summary_tier"] != SummaryTier.MACRO:
                ranked.append(memory_candidate(row, strategy, now, relevance=0.0, reason="prior"))

    # Relevance dominates; ties fall to relevance, then importance, then the
    # earlier floor (reading order), never to insertion order.
    ranked.sort(key=lambda c: (-c.score, -c.relevance, -c.importance, c.key))
    texts = PassageTexts(scope.workspace_id, ranked)
    return _pack(head, ranked, strategy=strategy, budget=budget, query=query, texts=texts)


class PassageTexts:
    """Reads passage texts in ranked order, a chunk of messages at a time, so
    a 1,000-token budget reads a few dozen messages however many matched."""

    CHUNK = 48

    def __init__(self, workspace_id: str, ranked: list[Candidate]):
        self.workspace_id = workspace_id
        self.ranked = ranked
        self.position = 0

    def fill(self, candidate: Candidate) -> bool:
        """Give `candidate` its line; False when its message is gone."""
        if candidate.passage is None or candidate.line:
            return True

        wanted: list[Candidate] = []
        index = self.ranked.index(candidate, self.position)
        for other in self.ranked[index:]:
            if other.passage is not None and not other.line:
                wanted.append(other)
                if len(wanted) >= self.CHUNK:
                    break
        rows = message_rows(workspace_id=self.workspace_id,
                            message_ids=list(dict.fromkeys(c.passage["message_id"] for c in wanted)))
        for other in wanted:
            row = rows.get(other.passage["message_id"])
            if row is None:
                other.line = "\0"  # gone since it was indexed: skipped
                continue
            start, end = other.passage.pop("start_char"), other.passage.pop("end_char")
            other.passage.update(role=row["role"], created_at=row["created_at"],
                                 text=content_text(row["content"])[start:end])
            other.day, line = passage_parts(row, start, end)
            other.line = "- " + line
        self.position = index
        return candidate.line != "\0"


def _pack(head: list[Candidate], ranked: list[Candidate], *, strategy: str, budget: int, query: str,
          texts: PassageTexts) -> Selection:
    header_tokens = count_tokens(SECTION_HEADER + "\n")
    injected: list[Candidate] = []
    omitted: list[Candidate] = []
    used = header_tokens
    examined = 0

    days: set[str] = set()
    # Messages the section already holds: a passage's, or a summary's sources.
    covered: set[str] = set()
    # The words of each chosen memory, by the messages it was made of
    # (normalised once, as it is chosen).
    quoted: dict[str, list[str]] = {}

    def consider(candidate: Candidate, limit: int) -> None:
        nonlocal used
        candidate.tokens = count_tokens(candidate.line + "\n")
        day_tokens = count_tokens(_day_header(candidate.day) + "\n") if candidate.day and candidate.day not in days else 0
        room = limit - used - day_tokens
        if candidate.tokens > room and candidate.passage is not None and room >= MIN_SHORTENED_TOKENS:
            shortened = _shortened(candidate.line, room, query)
            if shortened:
                candidate.line, candidate.tokens = shortened, count_tokens(shortened + "\n")
                candidate.passage["text"] = shortened.partition(": ")[2]  # what the prompt holds
        if candidate.tokens <= room:
            injected.append(candidate)
            used += candidate.tokens + day_tokens
            if candidate.day:
                days.add(candidate.day)
            if candidate.passage is not None or candidate.memory["type"] == MemoryType.SUMMARY:
                covered.update(candidate.sources)
            if candidate.passage is None:
                words = " ".join(str(candidate.memory["content"]).split())
                for message_id in candidate.sources:
                    quoted.setdefault(message_id, []).append(words)
        else:
            omitted.append(candidate)

    def adds_nothing(candidate: Candidate) -> bool:
        """A passage whose words a chosen summary made of its message already
        quotes, or a summary of messages the section holds: the budget would
        carry the same turn twice. A summary that only paraphrases the turn
        leaves its passage a place: the turn's own words are the evidence."""
        if candidate.passage is not None:
            if candidate.passage["message_id"] not in covered:
                return False
            words = " ".join(candidate.passage["text"].split())
            return bool(words) and any(words in text for text in quoted.get(candidate.passage["message_id"], ()))
        if candidate.memory is not None and candidate.memory["type"] == MemoryType.SUMMARY:
            sources = candidate.sources
            return bool(sources) and all(m in covered for m in sources)
        return False

    orientation_limit = header_tokens + int(budget * ORIENTATION_BUDGET_SHARE)
    pinned_limit = header_tokens + int(budget * PINNED_BUDGET_SHARE)
    for candidate in head:
        share = orientation_limit if candidate.reason == "orientation" else pinned_limit + used - header_tokens
        consider(candidate, min(budget, share))
    # The smallest line there is (a label and a word) no longer fits: stop
    # reading; what is left is reported as omitted without its text.
    floor = 6
    misses = 0
    for candidate in ranked:
        if used + floor > budget or examined >= MAX_EXAMINED or misses >= MAX_MISSES:
            omitted.append(candidate)
            continue
        examined += 1
        if not texts.fill(candidate):
            continue
        if adds_nothing(candidate):
            candidate.reason = "covered"
            omitted.append(candidate)
            continue
        before = len(injected)
        consider(candidate, budget)
        misses = 0 if len(injected) > before else misses + 1
    # Token counts of concatenated text can differ from the sum of the parts by
    # a merge at a boundary; count the real section and drop from the end
    # until it fits.
    text = _render(injected)
    while injected and count_tokens(text) > budget:
        omitted.insert(0, injected.pop())
        text = _render(injected)
    if not injected:
        text = ""
    return Selection(strategy=strategy, budget=budget, query=query, injected=injected, omitted=omitted,
                     tokens_used=count_tokens(text), candidates=len(head) + len(ranked), text=text)


def _shortened(line: str, room: int, query: str) -> str:
    """A passage's `line` ("- Speaker: words") cut to at most `room` tokens
    (its newline included): the run of words that holds the most of the
    query's words, an ellipsis where it was cut. Text without spaces (Chinese)
    is cut by characters. "" when not even one word fits."""
    label, _, text = line.partition(": ")
    units = text.split()
    joiner = " "
    if len(units) <= 1:
        units, joiner = list(text), ""
    wanted = {word.strip(".,;:!?\"'()").lower() for word in query.split()} - {""}

    counts = [int(unit.strip(".,;:!?\"'()").lower() in wanted or (not joiner and unit in query)) for unit in units]

    def best_run(length: int) -> str:
        window = sum(counts[:length])
        best, start = window, 0
        for i in range(1, len(units) - length + 1):
            window += counts[i + length - 1] - counts[i - 1]
            if window > best:
                best, start = window, i
        cut = joiner.join(units[start:start + length])
        before = ELLIPSIS + joiner if start > 0 else ""
        after = joiner + ELLIPSIS if start + length < len(units) else ""
        return f"{label}: {before}{cut}{after}"

    # The longest run that fits: a binary search over its length in units.
    low, high, fitted = 1, len(units), ""
    while low <= high:
        middle = (low + high) // 2
        candidate = best_run(middle)
        if count_tokens(candidate + "\n") <= room:
            fitted, low = candidate, middle + 1
        else:
            high = middle - 1
    return fitted


def _day_header(day: str) -> str:
    return f"[{day}]"


def _render(injected: list[Candidate]) -> str:
    """Memories in rank order, then passages grouped by day (days in the
    order their best passage ranked), each day's header once."""
    if not injected:
        return ""
    lines = [c.line for c in injected if not c.day]
    groups: dict[str, list[str]] = {}
    for c in injected:
        if c.day:
            groups.setdefault(c.day, []).append(c.line)
    for day, group in groups.items():
        lines += [_day_header(day), *group]
    return SECTION_HEADER + "\n" + "\n".join(lines)
