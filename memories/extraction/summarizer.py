"""Extractive summaries that follow the summary convention's four rules:
keep facts, preferences, open tasks and context; drop greetings,
acknowledgements, repetition and tool-call detail; write in the conversation's
own language; stay within 500 characters.

A summary is written in sections ("Facts: ... Open tasks: ... Context: ..." or
"事实：… 待办：… 背景：…") so that a later merge (the rolling summary, a macro
summary) can re-read its parts. Text written by another provider, without
sections, is read back as context sentences.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memories.extraction.text import clip, covered, detect_language, is_small_talk, similarity, split_sentences, terms
from memories.extraction.types import Turn

SUMMARY_MAX_CHARS = 500
LABELS = {
    "en": {"facts": "Facts: ", "tasks": "Open tasks: ", "done": "Done: ", "context": "Context: ",
           "user": "User: ", "assistant": "Assistant: ", "sep": "; ", "end": ". "},
    "zh": {"facts": "事实：", "tasks": "待办：", "done": "已完成：", "context": "背景：",
           "user": "用户：", "assistant": "助手：", "sep": "；", "end": "。"},
}
_SECTION_RE = re.compile(r"(Facts: |Open tasks: |Done: |Context: |事实：|待办：|已完成：|背景：)")
_SECTION_NAMES = {"Facts: ": "facts", "事实：": "facts", "Open tasks: ": "tasks", "待办：": "tasks",
                  "Done: ": "done", "已完成：": "done", "Context: ": "context", "背景：": "context"}
_HAS_DETAIL = re.compile(r"\d|[A-Z][a-z]+|@|https?://|[\u4e00-\u9fff]{2,}")


def parse_sections(summary: str) -> dict[str, list[str]]:
    """The parts of a summary written by `compose`; free text reads as context."""
    sections: dict[str, list[str]] = {"facts": [], "tasks": [], "done": [], "context": []}
    if not summary:
        return sections
    parts = _SECTION_RE.split(summary)
    if len(parts) == 1:
        sections["context"] = split_sentences(summary)
        return sections
    if parts[0].strip():
        sections["context"].extend(split_sentences(parts[0]))
    for label, body in zip(parts[1::2], parts[2::2], strict=False):
        name = _SECTION_NAMES[label]
        body = body.strip().rstrip("。.").strip()
        if name == "context":
            sections[name].extend(s.strip() for s in re.split(r"(?<=[.!?。！？])\s*|\s\|\s", body) if s.strip())
        else:
            sections[name].extend(s.strip() for s in re.split(r"[;；]\s*", body) if s.strip())
    return sections


def _score(sentence: str, role: str, position: float) -> float:
    score = 1.0 if role == "user" else 0.7
    length = len(sentence)
    if length < 12:
        score -= 0.5
    elif length > 240:
        score -= 0.3
    if _HAS_DETAIL.search(sentence):
        score += 0.4
    if "?" in sentence or "？" in sentence:
        score += 0.2 if role == "user" else -0.2
    return score + 0.3 * position  # later turns carry the current state


def context_sentences(turns: Iterable[Turn], language: str, exclude: Iterable[str] = ()) -> list[tuple[float, str]]:
    """Scored context sentences (speaker-tagged), small talk, tool output and
    repetition removed, sentences in another language than `language` demoted."""
    labels = LABELS[language]
    turns = [t for t in turns if t.role in {"user", "assistant"}]
    # A sentence the facts and tasks already say (together) is repetition.
    excluded = " ".join(exclude)
    chosen: list[tuple[float, str, str]] = []
    for index, turn in enumerate(turns):
        position = index / max(len(turns) - 1, 1)
        for sentence in split_sentences(turn.text):
            if is_small_talk(sentence) or len(terms(sentence)) < 2:
                continue
            if excluded and covered(sentence, excluded) >= 0.6:
                continue
            score = _score(sentence, turn.role, position)
            if detect_language(sentence) != language:
                score *= 0.3
            duplicate = next((i for i, (_, s, _r) in enumerate(chosen) if similarity(sentence, s) >= 0.6), None)
            if duplicate is not None:
                # Repetition: keep one copy, the later wording.
                chosen[duplicate] = (max(score, chosen[duplicate][0]), sentence, turn.role)
                continue
            chosen.append((score, sentence, turn.role))
    return [(score, labels[role] + sentence) for score, sentence, role in chosen]


def compose(
    language: str,
    *,
    facts: list[str],
    tasks: list[str],
    done: list[str],
    context: list[str],
    limit: int = SUMMARY_MAX_CHARS,
) -> str:
    """Sections in priority order, each item kept whole, the whole clipped to `limit`.

    Facts and open tasks come first: they are what the next turn most often needs.
    Context fills what is left, newest first when it does not all fit."""
    labels = LABELS[language]

    def dedupe(items: list[str]) -> list[str]:
        out: list[str] = []
        for item in items:
            item = item.strip().rstrip("。.;；")
            if item and not any(similarity(item, o) >= 0.8 or item == o for o in out):
                out.append(item)
        return out

    facts, tasks, done, context = dedupe(facts), dedupe(tasks), dedupe(done), dedupe(context)
    budget = limit
    parts: list[str] = []
    for name, items, share in (("facts", facts, 0.45), ("tasks", tasks, 0.3), ("done", done, 0.1)):
        if not items:
            continue
        cap = max(int(limit * share), 60)
        taken: list[str] = []
        used = len(labels[name]) + len(labels["end"])
        for item in items:
            cost = len(item) + len(labels["sep"])
            if used + cost > min(cap, budget):
                continue
            taken.append(item)
            used += cost
        if taken:
            text = labels[name] + labels["sep"].join(taken) + labels["end"]
            parts.append(text)
            budget -= len(text)
    if context and budget > 30:
        taken = []
        used = len(labels["context"])
        for item in reversed(context):  # newest first
            sentence = item if re.search(r"[.!?。！？]$", item) else item + labels["end"].strip()
            cost = len(sentence) + 1
            if used + cost > budget:
                continue
            taken.insert(0, sentence)
            used += cost
        if taken:
            parts.append(labels["context"] + " ".join(taken))
    text = "".join(parts) if language == "zh" else " ".join(p.strip() for p in parts)
    return clip(text.strip(), limit)


def summarize_turns(turns: list[Turn], language: str, *, facts: list[str], tasks: list[str], done: list[str]) -> str:
    """A micro summary of one batch of turns."""
    scored = context_sentences(turns, language, exclude=[*facts, *tasks, *done])
    # The best few, in conversation order: a micro summary covers a short span.
    best = sorted(range(len(scored)), key=lambda i: scored[i][0], reverse=True)[:6]
    context = [scored[i][1] for i in sorted(best)]
    return compose(language, facts=facts, tasks=tasks, done=done, context=context)


def merge_summaries(summaries: list[str], language: str | None = None, *, limit: int = SUMMARY_MAX_CHARS) -> str:
    """One summary from several, oldest first: later facts win over earlier
    similar ones, tasks reported done drop out, context keeps the newest."""
    if language is None:
        language = detect_language(" ".join(summaries[-3:]))
    facts: list[str] = []
    tasks: list[str] = []
    done: list[str] = []
    context: list[str] = []
    for summary in summaries:
        sections = parse_sections(summary)
        for fact in sections["facts"]:
            facts = [f for f in facts if similarity(f, fact) < 0.5]
            facts.append(fact)
        tasks.extend(sections["tasks"])
        done.extend(sections["done"])
        context.extend(sections["context"])
    tasks = [t for t in tasks if not any(similarity(t, d) >= 0.4 for d in done)]
    return compose(language, facts=facts, tasks=tasks, done=done[-3:], context=context, limit=limit)
