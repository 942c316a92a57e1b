"""Composing a summary within its length from facts, tasks and context
sentences, each section given its share."""

from __future__ import annotations

from collections.abc import Sequence

from memories.extraction.summarizer.scoring import Candidate, context_sentences, without
from memories.extraction.summarizer.sections import (
    ENDS_SENTENCE_RE,
    LABELS,
    MICRO_SHARES,
    SUMMARY_MAX_CHARS,
    TRAILING_SEMICOLONS_RE,
    Composed,
    Piece,
    fact_weight,
    localize_label,
    split_label,
)
from memories.extraction.text import (
    clip,
    overlap_ratio,
    stems,
)
from memories.extraction.types import Turn


def _piece(item: str | Piece, priority: float = 0.0) -> Piece:
    return item if isinstance(item, Piece) else Piece(item, (), priority)


def _render_context(items: Sequence[str], language: str) -> str:
    labels = LABELS[language]
    out: list[str] = []
    last: str | None = None
    for item in items:
        label, body = split_label(item)
        if not ENDS_SENTENCE_RE.search(body):
            body += labels["end"].strip()
        if label is not None:
            label = localize_label(label, language)
        # A body that itself starts "Word: ..." gets its label again, so that a
        # re-read does not take "Word" for a speaker.
        if label is not None and (label != last or split_label(body)[0] is not None):
            out.append(f"{label}{labels['said']}{body}")
        else:
            out.append(body)
        last = label
    return ("" if language == "zh" else " ").join(out)


def compose(
    language: str,
    *,
    facts: Sequence[str | Piece],
    tasks: Sequence[str | Piece],
    done: Sequence[str | Piece],
    context: Sequence[str | Piece],
    limit: int = SUMMARY_MAX_CHARS,
    shares: dict[str, float] | None = None,
) -> Composed:
    """Sections in priority order, each item kept whole, the whole within `limit`.

    Facts and open tasks come first: they are what the next turn most often
    needs; facts are taken by weight (names and allergies first), in the given
    order among equals. Context fills what is left, its items taken by
    priority (by default newest first) and written in conversation order. The
    result names the messages of every item it kept."""
    shares = shares or MICRO_SHARES
    labels = LABELS[language]

    def dedupe(items: Sequence[str | Piece], default_priority=lambda i, n: 0.0) -> list[Piece]:
        out: list[Piece] = []
        out_stems: list[frozenset[str]] = []
        for index, raw in enumerate(items):
            piece = _piece(raw, default_priority(index, len(items)))
            text = piece.text.strip()
            text = TRAILING_SEMICOLONS_RE.sub("", text)
            text = text[:-1] if text.endswith(("。", ".")) and not text.endswith("...") else text
            if not text:
                continue
            # `similarity` with each kept item, their stems taken once (a rolling
            # summary dedupes up to a few hundred known facts).
            own = stems(text)
            same = next((i for i, o in enumerate(out) if o.text == text or overlap_ratio(own, out_stems[i]) >= 0.8),
                        None)
            if same is not None:
                # The later wording wins; both items' messages stay its sources.
                merged = tuple(dict.fromkeys(out[same].sources + piece.sources))
                out[same] = Piece(text, merged, min(piece.priority, out[same].priority))
                out_stems[same] = own
                continue
            out.append(Piece(text, piece.sources, piece.priority))
            out_stems.append(own)
        return out

    facts_p, tasks_p, done_p = dedupe(facts), dedupe(tasks), dedupe(done)
    facts_p.sort(key=lambda p: -fact_weight(p.text))
    context_p = dedupe(context, lambda i, n: float(n - i))  # str items: newest first
    budget = limit
    parts: list[str] = []
    sources: list[str] = []
    for name, items in (("facts", facts_p), ("tasks", tasks_p), ("done", done_p)):
        if not items:
            continue
        cap = max(int(limit * shares[name]), 60)
        taken: list[Piece] = []
        used = len(labels[name]) + len(labels["end"])
        for item in items:
            cost = len(item.text) + len(labels["sep"])
            if used + cost > min(cap, budget):
                continue
            taken.append(item)
            used += cost
        if taken:
            text = labels[name] + labels["sep"].join(p.text for p in taken) + labels["end"]
            parts.append(text)
            budget -= len(text)
            sources.extend(s for p in taken for s in p.sources)
    if context_p and budget > 30:
        order = sorted(range(len(context_p)), key=lambda i: context_p[i].priority)
        taken_idx: list[int] = []
        for index in order:
            trial = sorted([*taken_idx, index])
            text = labels["context"] + _render_context([context_p[i].text for i in trial], language)
            if len(text) + 1 > budget:
                continue
            taken_idx = trial
        if taken_idx:
            parts.append(labels["context"] + _render_context([context_p[i].text for i in taken_idx], language))
            sources.extend(s for i in taken_idx for s in context_p[i].sources)
    text = "".join(parts) if language == "zh" else " ".join(p.strip() for p in parts)
    return Composed(clip(text.strip(), limit), list(dict.fromkeys(sources)))


def summarize_turns(
    turns: list[Turn], language: str, *, facts: Sequence[str | Piece], tasks: Sequence[str | Piece],
    done: Sequence[str | Piece], human: bool = False, user_name: str | None = None,
    scored: list[Candidate] | None = None,
) -> Composed:
    """A micro summary of one batch of turns (prefixes already stripped).
    `scored`: the batch's candidates from `context_sentences` without
    exclusions, when the caller already has them."""
    excluded = [p.text if isinstance(p, Piece) else p for p in [*facts, *tasks, *done]]
    if scored is None:
        scored = context_sentences(turns, language, exclude=excluded, human=human, user_name=user_name)
    else:
        scored = without(scored, excluded)
    # The best sentences first; compose writes them in conversation order.
    ranked = sorted(range(len(scored)), key=lambda i: scored[i].score, reverse=True)
    rank = {index: position for position, index in enumerate(ranked)}
    context = [Piece(c.text, tuple(c.sources), rank[i]) for i, c in enumerate(scored)]
    return compose(language, facts=facts, tasks=tasks, done=done, context=context)
