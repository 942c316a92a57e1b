"""Relevance of recall entries to a query: Okapi BM25 over the database's
shortlist, fused with dense similarity when an embedding provider is on.

The database narrows the candidates to entries of the visible scopes that
share a term with the query (see `fulltext.shortlist`); BM25 is then computed
exactly here, with document frequencies and the mean length of those scopes,
so memories and passages are scored on one scale and both databases rank the
same way.

Two numbers come out per entry:

- `relevance`, on an absolute scale (0..1), says whether the entry is about
  the query at all: the larger of its *term evidence* (the query terms it
  contains, weighted by BM25's idf, as a share of the idf of the query's
  `RELEVANCE_TERMS` rarest terms) and its *meaning evidence* (the dense
  cosine mapped linearly from `RECALL_COSINE_UNRELATED` -> 0 to
  `RECALL_COSINE_SAME` -> 1, both moved by `RECALL_COSINE_SCRIPT_SHIFT` for
  the scripts of the query and the entry: the model sets two Chinese texts
  nearer each other than two English ones, related or not, and an English
  question further from the Chinese turn that answers it).
  Neither depends on the other candidates: an
  entry alone in its pool scores what it scores beside a thousand others.
  Entries under `RECALL_MIN_RELEVANCE` are not returned at all, but for a
  passage of the conversation's own messages that holds a query term.
- `rank`, relative to the query's candidates (the reciprocal-rank fusion of
  the BM25 and dense orders, or BM25 over the best BM25), orders the
  relevant entries.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

import memories.recall.fulltext as fulltext
from memories.recall.analysis import cjk_share, query_terms
from memories.recall.dense import DenseRecall, script_shift
from memories.recall.models import RecallKind
from memories.recall.stats import scope_states, term_counts

# Okapi BM25's usual constants: term-frequency saturation and length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75
# Entries the database hands over for exact scoring. A query of common words
# can match thousands of passages of a long conversation; past this many the
# database's own rank picks which (and document frequencies are counted apart).
# The selection examines at most `candidates.MAX_EXAMINED` (400) passages and
# `MAX_MEMORY_ROWS` memories of the fused ranking; a lexical rank past 400
# adds at most 1/(RRF_K + 400) to an entry's fused score, which moves nothing
# the selection reaches. 800 read and scored twice the rows for that.
SHORTLIST_LIMIT = 400
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
# Term evidence is full when an entry holds the query's this many rarest
# terms: a long query (a whole user message) is not diluted by its other words.
RELEVANCE_TERMS = 3
EVIDENCE_DOCS = 50


@dataclass
class Scored:
    hit: fulltext.Hit
    bm25: float = 0.0
    dense: float | None = None
    # How far the model sets this entry's script pair with the query apart
    # from a Latin-script pair (`RECALL_COSINE_SCRIPT_SHIFT`).
    dense_shift: float = 0.0
    terms: float = 0.0  # term evidence, 0..1 (absolute)
    relevance: float = 0.0  # 0..1, absolute: max(term evidence, meaning evidence)
    rank: float = 0.0  # 0..1, relative to this query's candidates: orders the relevant
    linked: bool = False  # found by the expanded pass (shares the best entries' rare terms)

    @property
    def scaled_dense(self) -> float:
        """The cosine on a Latin-script pair's scale: what the margin and the
        ranking by meaning compare."""
        return (self.dense or 0.0) - self.dense_shift


def idf_weights(terms: Sequence[str], *, n_docs: int, df: dict[str, int]) -> dict[str, float]:
    return {t: math.log(1 + (n_docs - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in terms}


def bm25_scores(hits: Sequence[fulltext.Hit], terms: Sequence[str], *, n_docs: int, avg_len: float,
                df: dict[str, int]) -> list[tuple[float, float]]:
    """(BM25, term evidence) of each hit."""
    avg_len = avg_len or 1.0
    idf = idf_weights(terms, n_docs=n_docs, df=df)
    # Term evidence weighs words as a collection of at least EVIDENCE_DOCS
    # entries would: in a scope of two memories every word is "common", and
    # "where does Ana live" must still find "Lives in Lisbon".
    # A word most entries hold ("user" in "User prefers ...", a speaker's name
    # in every turn) is no evidence of topic beside a rarer word of the same
    # query: weighed by the share of entries lacking it that the query's
    # rarest word has. Where every word of the query is that common (a
    # scope all about seats, asked about seats), none is discounted.
    weights = idf_weights(terms, n_docs=max(n_docs, EVIDENCE_DOCS), df=df)
    if n_docs >= 5 and terms:
        rarest = min(df.get(t, 0) for t in terms)
        weights = {t: w * max(0.0, 1 - (df.get(t, 0) - rarest) / n_docs) for t, w in weights.items()}
    needles = [(f" {t} ", idf[t], weights[t]) for t in terms]
    full = sum(sorted(weights.values(), reverse=True)[:RELEVANCE_TERMS]) or 1.0
    scores = []
    for hit in hits:
        norm = BM25_K1 * (1 - BM25_B + BM25_B * (hit.length or 1) / avg_len)
        score = held = 0.0
        text = hit.terms
        for needle, weight, evidence in needles:
            tf = text.count(needle)
            if tf:
                score += weight * tf * (BM25_K1 + 1) / (tf + norm)
                held += evidence
        scores.append((score, min(1.0, held / full)))
    return scores


def meaning_evidence(cosine: float | None, shift: float = 0.0) -> float:
    """A dense cosine on the absolute 0..1 scale (see the module's docstring);
    `shift`: the script pair's (`dense.script_shift`)."""
    if cosine is None:
        return 0.0
    low, high = settings.RECALL_COSINE_UNRELATED + shift, settings.RECALL_COSINE_SAME + shift
    return min(1.0, max(0.0, (cosine - low) / (high - low)))


def rank(*, workspace_id: str, scope_tokens: Sequence[str], query: str, dense: DenseRecall | None = None
         ) -> list[Scored]:
    """Entries of the scopes relevant to `query` (see the module's docstring
    for `relevance` and `rank`), best first.

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
    df = term_counts(workspace_id=workspace_id, scope_tokens=scope_tokens, terms=terms) if terms else {}
    hits = _shortlist(workspace_id=workspace_id, scope_tokens=scope_tokens, terms=terms, df=df)
    if hits and not states:
        states = scope_states(workspace_id=workspace_id, scope_tokens=scope_tokens)
    scored: dict[int, Scored] = {}
    if hits:
        n_docs, avg_len = fulltext.statistics_of(states.values())
        for hit, (score, held) in zip(hits, bm25_scores(hits, terms, n_docs=n_docs, avg_len=avg_len, df=df),
                                      strict=True):
            if score > 0:
                scored[hit.id] = Scored(hit=hit, bm25=score, terms=held)
    query_cjk = cjk_share(terms)
    similarities = dense(scope_tokens, query, states, query_cjk=query_cjk) if wants_dense else {}
    if similarities:
        missing = [entry_id for entry_id in similarities if entry_id not in scored]
        for hit in fulltext.entries_by_ids(missing):
            scored[hit.id] = Scored(hit=hit)
        near = [scored[entry_id] for entry_id in similarities if entry_id in scored]
        for entry in near:
            entry.dense = similarities[entry.hit.id]
            entry.dense_shift = script_shift(query_cjk, cjk_share(entry.hit.terms))
        # The margin below the best, each cosine read on its script pair's
        # scale; dense recall handed over those within its spread as well.
        floor = max((s.scaled_dense for s in near), default=0.0) - settings.RECALL_DENSE_MARGIN
        for entry in near:
            if entry.scaled_dense < floor:
                if entry.bm25 > 0:
                    entry.dense, entry.dense_shift = None, 0.0
                else:
                    del scored[entry.hit.id]
    rankings = [(1.0, sorted((s for s in scored.values() if s.bm25 > 0), key=lambda s: -s.bm25))]
    if similarities:
        rankings.append((1.0, sorted((s for s in scored.values() if s.dense is not None),
                                     key=lambda s: -s.scaled_dense)))
        _fuse(scored, rankings)
    else:
        top = max((s.bm25 for s in scored.values()), default=0.0)
        for s in scored.values():
            s.rank = s.bm25 / top if top else 0.0
    if terms and scored and settings.RECALL_EXPANSION_WEIGHT > 0:
        expansion = _expansion(workspace_id=workspace_id, scope_tokens=scope_tokens, terms=terms, scored=scored,
                               states=states)
        if expansion:
            rankings.append((settings.RECALL_EXPANSION_WEIGHT, expansion))
            _fuse(scored, rankings)
    for s in scored.values():
        s.relevance = max(s.terms, meaning_evidence(s.dense, s.dense_shift))
    relevant = [s for s in scored.values() if s.rank > 0 and is_relevant(s)]
    return sorted(relevant, key=lambda s: (-s.rank, -s.bm25, s.hit.id))


def _shortlist(*, workspace_id: str, scope_tokens: Sequence[str], terms: Sequence[str], df: dict[str, int]
               ) -> list[fulltext.Hit]:
    """The entries BM25 scores exactly: every entry holding one of the
    query's rarer terms, then, if those are fewer than `SHORTLIST_LIMIT`, the
    database's pick of those holding only its common ones.

    A term is rare while the rarer terms' document counts, summed, stay within
    the rows the database ranks (`fulltext.RANK_POOL`): all their entries
    come back, and no entry that holds a rare term is lost to an arbitrary
    cut. A common term's idf is small; an entry holding it and no rare term
    is ranked below one that holds a rare term, so those are only read to
    fill the shortlist. Reading a common term's matches was most of a
    context call's time once a scope held 100,000 entries."""
    if not terms:
        return []
    rare: list[str] = []
    total = 0
    for term in sorted(terms, key=lambda t: (df.get(t, 0), t)):
        total += df.get(term, 0)
        if total > fulltext.RANK_POOL:
            break
        rare.append(term)
    common = [t for t in terms if t not in rare]
    if not rare or not common:
        return fulltext.shortlist(workspace_id=workspace_id, scope_tokens=scope_tokens, terms=terms,
                                  limit=SHORTLIST_LIMIT)
    hits = fulltext.shortlist(workspace_id=workspace_id, scope_tokens=scope_tokens, terms=rare,
                              limit=SHORTLIST_LIMIT)
    if len(hits) < SHORTLIST_LIMIT:
        seen = {hit.id for hit in hits}
        more = fulltext.shortlist(workspace_id=workspace_id, scope_tokens=scope_tokens, terms=common,
                                  limit=SHORTLIST_LIMIT)
        hits += [hit for hit in more if hit.id not in seen][:SHORTLIST_LIMIT - len(hits)]
    return hits


def _fuse(scored: dict[int, Scored], rankings: list[tuple[float, list[Scored]]]) -> None:
    """Reciprocal-rank fusion of weighted rankings into `rank` (0..1)."""
    rrf_k = settings.RECALL_RRF_K
    fused: dict[int, float] = {}
    for weight, ranking in rankings:
        for position, s in enumerate(ranking):
            fused[s.hit.id] = fused.get(s.hit.id, 0.0) + weight / (rrf_k + position + 1)
    top = max(fused.values(), default=0.0)
    for s in scored.values():
        s.rank = fused.get(s.hit.id, 0.0) / top if top else 0.0


def _expansion(*, workspace_id: str, scope_tokens: Sequence[str], terms: Sequence[str],
               scored: dict[int, Scored], states) -> list[Scored]:
    """The second pass: entries that share the best entries' rarest terms
    (not the query's), ranked by BM25 over those terms. Entries new to
    `scored` join it. Two statements, whatever the scopes hold: the terms'
    kept document counts and one shortlist."""
    best = sorted(scored.values(), key=lambda s: (-s.rank, -s.bm25, s.hit.id))[:EXPANSION_SOURCES]
    asked = set(terms)
    offered = [[t for t in dict.fromkeys(s.hit.terms.split()) if t not in asked and not t.isdigit()] for s in best]
    candidates = list(dict.fromkeys(t for group in offered for t in group))
    if not candidates:
        return []
    n_docs, avg_len = fulltext.statistics_of(states.values())
    max_df = min(EXPANSION_MAX_DF, int(n_docs * EXPANSION_MAX_SHARE))
    if max_df < 2:
        return []
    df = term_counts(workspace_id=workspace_id, scope_tokens=scope_tokens, terms=candidates)
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
    for hit, (score, _held) in zip(hits, bm25_scores(hits, chosen, n_docs=n_docs, avg_len=avg_len, df=df),
                                   strict=True):
        if score > 0:
            entry = scored.setdefault(hit.id, Scored(hit=hit))
            entry.linked = True
            ranking.append((score, entry))
    ranking.sort(key=lambda pair: (-pair[0], pair[1].hit.id))
    return [entry for _, entry in ranking]


def is_relevant(scored: Scored) -> bool:
    """Whether an entry counts as relevant to the query at all (`rank` returns
    only those). A passage of the conversation's own messages that shares a
    word of the query, or of its best entries (the expanded pass), is quoted
    evidence whatever its share; found by meaning alone it needs the
    threshold like a memory."""
    return scored.relevance >= settings.RECALL_MIN_RELEVANCE or (
        scored.hit.kind == RecallKind.PASSAGE and (scored.terms > 0 or scored.linked))
