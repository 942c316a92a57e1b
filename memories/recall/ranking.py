"""Relevance of recall entries to a query: Okapi BM25 over the database's
shortlist, fused with dense similarity when an embedding provider is on.

The database narrows the candidates to entries of the visible scopes that
share a term with the query (see `fulltext.shortlist`); BM25 is then computed
exactly here, with document frequencies and the mean length of those scopes,
so memories and passages are scored on one scale and both databases rank the
same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

import memories.recall.fulltext as fulltext
from memories.recall.analysis import query_terms
from memories.recall.dense import DenseRecall
from memories.recall.stats import scope_states

# Okapi BM25's usual constants: term-frequency saturation and length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75
# Entries the database hands over for exact scoring. A query of common words
# can match thousands of passages of a long conversation; past this many the
# database's own rank picks which (and document frequencies are counted apart).
SHORTLIST_LIMIT = 800
# Query terms kept: a whole user message as the query stays bounded.
MAX_QUERY_TERMS = 48
# Multi-hop questions name one end of a chain ("Owen's aunt") while the answer
# sits at the other, in words the question does not use ("Anjali keeps
# sending pictures from Auckland"). The best first-pass entries name the link
# ("my aunt Anjali"): their rarest terms the query lacks search again
# (pseudo-relevance feedback), and that ranking is fused beside the others
# with a lower weight (settings.RECALL_EXPANSION_WEIGHT, chosen on
# bench/recall.py's tuning split: bench/README.md).
EXPANSION_SOURCES = 3
EXPANSION_TERMS_PER_SOURCE = 2
# A term in more of the scopes' entries than this (or than this share of
# them) names nothing in particular; one in a single entry links it to
# nothing else. A small scope has no rare terms: nothing is expanded.
EXPANSION_MAX_DF = 24
EXPANSION_MAX_SHARE = 0.05
EXPANSION_LIMIT = 200


@dataclass
class Scored:
    hit: fulltext.Hit
    bm25: float = 0.0
    dense: float | None = None
    relevance: float = 0.0  # 0..1 within this query


def bm25_scores(hits: Sequence[fulltext.Hit], terms: Sequence[str], *, n_docs: int, avg_len: float,
                df: dict[str, int]) -> list[float]:
    avg_len = avg_len or 1.0
    idf = {t: math.log(1 + (n_docs - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in terms}
    needles = [(f" {t} ", idf[t]) for t in terms]
    scores = []
    for hit in hits:
        norm = BM25_K1 * (1 - BM25_B + BM25_B * (hit.length or 1) / avg_len)
        score = 0.0
        text = hit.terms
        for needle, weight in needles:
            tf = text.count(needle)
            if tf:
                score += weight * tf * (BM25_K1 + 1) / (tf + norm)
        scores.append(score)
    return scores


def rank(*, workspace_id: str, scope_tokens: Sequence[str], query: str, dense: DenseRecall | None = None
         ) -> list[Scored]:
    """Entries of the scopes relevant to `query`, best first, `relevance` in 0..1.

    `dense`, when given, is the workspace's `DenseRecall`: `{entry_id:
    cosine}` of the scopes' embedded entries nearest the query; its ranking is fused with BM25's by
    reciprocal rank, so an entry found by meaning alone (a paraphrase, another
    language) can still be chosen."""
    terms = query_terms(query)[:MAX_QUERY_TERMS]
    wants_dense = dense is not None and bool(query.strip())
    # The scopes' running totals, one statement: BM25's N and mean length,
    # and which scopes have vectors (the query's vector starts beside the
    # shortlist's SQL only where one will be compared).
    states = scope_states(workspace_id=workspace_id, scope_tokens=scope_tokens) if wants_dense else {}
    if wants_dense:
        dense.begin(scope_tokens, query, states)
    hits = fulltext.shortlist(workspace_id=workspace_id, scope_tokens=scope_tokens, terms=terms,
                           limit=SHORTLIST_LIMIT) if terms else []
    if hits and not states:
        states = scope_states(workspace_id=workspace_id, scope_tokens=scope_tokens)
    scored: dict[int, Scored] = {}
    if hits:
        n_docs, avg_len = fulltext.statistics_of(states.values())
        if len(hits) >= SHORTLIST_LIMIT:
            df = fulltext.term_document_counts(workspace_id=workspace_id, scope_tokens=scope_tokens, terms=terms)
        else:
            df = {t: 0 for t in terms}
            for hit in hits:
                for t in terms:
                    if f" {t} " in hit.terms:
                        df[t] += 1
        for hit, score in zip(hits, bm25_scores(hits, terms, n_docs=n_docs, avg_len=avg_len, df=df), strict=True):
            if score > 0:
                scored[hit.id] = Scored(hit=hit, bm25=score)
    similarities = dense(scope_tokens, query, states) if wants_dense else {}
    if similarities:
        missing = [entry_id for entry_id in similarities if entry_id not in scored]
        for hit in fulltext.entries_by_ids(missing):
            scored[hit.id] = Scored(hit=hit)
        for entry_id, value in similarities.items():
            if entry_id in scored:
                scored[entry_id].dense = value
    rankings = [(1.0, sorted((s for s in scored.values() if s.bm25 > 0), key=lambda s: -s.bm25))]
    if similarities:
        rankings.append((1.0, sorted((s for s in scored.values() if s.dense is not None), key=lambda s: -(s.dense or 0))))
        _fuse(scored, rankings)
    else:
        top = max((s.bm25 for s in scored.values()), default=0.0)
        for s in scored.values():
            s.relevance = s.bm25 / top if top else 0.0
    if terms and scored and settings.RECALL_EXPANSION_WEIGHT > 0:
        expansion = _expansion(workspace_id=workspace_id, scope_tokens=scope_tokens, terms=terms, scored=scored,
                               states=states)
        if expansion:
            rankings.append((settings.RECALL_EXPANSION_WEIGHT, expansion))
            _fuse(scored, rankings)
    return sorted(scored.values(), key=lambda s: (-s.relevance, -s.bm25, s.hit.id))


def _fuse(scored: dict[int, Scored], rankings: list[tuple[float, list[Scored]]]) -> None:
    """Reciprocal-rank fusion of weighted rankings into `relevance` (0..1)."""
    rrf_k = settings.RECALL_RRF_K
    fused: dict[int, float] = {}
    for weight, ranking in rankings:
        for position, s in enumerate(ranking):
            fused[s.hit.id] = fused.get(s.hit.id, 0.0) + weight / (rrf_k + position + 1)
    top = max(fused.values(), default=0.0)
    for s in scored.values():
        s.relevance = fused.get(s.hit.id, 0.0) / top if top else 0.0


def _expansion(*, workspace_id: str, scope_tokens: Sequence[str], terms: Sequence[str],
               scored: dict[int, Scored], states) -> list[Scored]:
    """The second pass: entries that share the best entries' rarest terms
    (not the query's), ranked by BM25 over those terms. Entries new to
    `scored` join it. Two statements, whatever the scopes hold: the terms'
    document counts (each capped) and one shortlist."""
    best = sorted(scored.values(), key=lambda s: (-s.relevance, -s.bm25, s.hit.id))[:EXPANSION_SOURCES]
    asked = set(terms)
    offered = [[t for t in dict.fromkeys(s.hit.terms.split()) if t not in asked and not t.isdigit()] for s in best]
    candidates = list(dict.fromkeys(t for group in offered for t in group))
    if not candidates:
        return []
    n_docs, avg_len = fulltext.statistics_of(states.values())
    max_df = min(EXPANSION_MAX_DF, int(n_docs * EXPANSION_MAX_SHARE))
    if max_df < 2:
        return []
    df = fulltext.term_document_counts(workspace_id=workspace_id, scope_tokens=scope_tokens, terms=candidates,
                                    cap=max_df + 1)
    chosen: list[str] = []
    for group in offered:
        rare = sorted((t for t in group if 2 <= df.get(t, 0) <= max_df), key=lambda t: (df[t], t))
        chosen += [t for t in rare[:EXPANSION_TERMS_PER_SOURCE] if t not in chosen]
    if not chosen:
        return []
    sources = {s.hit.id for s in best}
    hits = [h for h in fulltext.shortlist(workspace_id=workspace_id, scope_tokens=scope_tokens, terms=chosen,
                                       limit=EXPANSION_LIMIT) if h.id not in sources]
    ranking: list[tuple[float, Scored]] = []
    for hit, score in zip(hits, bm25_scores(hits, chosen, n_docs=n_docs, avg_len=avg_len, df=df), strict=True):
        if score > 0:
            entry = scored.setdefault(hit.id, Scored(hit=hit))
            ranking.append((score, entry))
    ranking.sort(key=lambda pair: (-pair[0], pair[1].hit.id))
    return [entry for _, entry in ranking]


def is_relevant(scored: Scored) -> bool:
    """Whether an entry counts as relevant to the query at all."""
    return scored.relevance > 0
