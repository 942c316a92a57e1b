"""Merging summaries (the rolling summary, a macro summary): a later value of
a fact replaces an earlier one."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from memories.extraction.patterns.values import category
from memories.extraction.summarizer.composition import compose
from memories.extraction.summarizer.sections import SUMMARY_MAX_CHARS, Piece, parse_sections, split_label
from memories.extraction.text import (
    detect_language,
    similarity,
)

# The part of a fact sentence before its value: two facts with the same slot
# are two values of one attribute, and the later one wins.
_EN_SLOT = re.compile(
    r"^(?P<frame>.+?(?:'s [\w\- ]+? is| lives in| works at| works as| is moving to|'s diet:| is \d+ years old|"
    r" no longer likes| prefers| likes| dislikes| is no longer allergic to| is allergic to))\s+(?P<value>.+)$"
)
_ZH_SLOT = re.compile(r"^(?P<frame>.+?(?:的[^是]{1,10}是|叫|住在|要搬到|饮食：|不再喜欢|不喜欢|喜欢|不再对|对|是))(?P<value>.+)$")
_MULTI_VALUED = ("allergic to", "dislikes", "对")


def fact_slot(fact: str) -> str | None:
    """Which attribute a fact sentence sets ("User lives in" for "User lives in
    Oslo"), with the category for preferences; None for free text."""

    match = (_ZH_SLOT if detect_language(fact) == "zh" else _EN_SLOT).match(fact.strip())
    if not match:
        return None
    frame, value = match.group("frame"), match.group("value")
    frame = frame.replace(" no longer likes", " prefers").replace(" likes", " prefers")
    frame = frame.replace(" is no longer allergic to", " is allergic to").replace("不再喜欢", "喜欢").replace("不再对", "对")
    if frame.endswith((" prefers", "喜欢")):
        return f"{frame}|{category(value) or value.lower()}"
    if frame.endswith(_MULTI_VALUED):
        return f"{frame}|{value.lower().rstrip('过敏')}"
    return frame


def fact_value(fact: str) -> str | None:
    """The value part of a fact sentence ("Oslo" in "User lives in Oslo")."""
    match = (_ZH_SLOT if detect_language(fact) == "zh" else _EN_SLOT).match(fact.strip())
    return match.group("value").strip() if match else None


def drop_stale(context: Sequence[str | Piece], replaced: Iterable[tuple[str, str]]) -> list:
    """Context items without the values that newer facts replaced: "I live in
    Hangzhou" goes once "User lives in Shanghai" is the fact, unless the item
    also says the new value (a correction names both). `replaced` holds
    (old value, new value) pairs."""
    pairs = [(old, new) for old, new in replaced if old and len(old) >= 2 and old != new]
    if not pairs:
        return list(context)
    out = []
    for item in context:
        text = item.text if isinstance(item, Piece) else item
        if any(old in text and not (new and new in text) for old, new in pairs):
            continue
        out.append(item)
    return out


def merge_summaries(summaries: list[str], language: str | None = None, *, limit: int = SUMMARY_MAX_CHARS) -> str:
    """One summary from several, oldest first: a later value of a fact replaces
    the earlier one, tasks reported done drop out, context keeps its speakers
    and the newest sentences. Written in the language of the latest summaries;
    context in another language is left out."""
    if language is None:
        language = detect_language(" ".join(summaries[-3:]))
    facts: list[str] = []
    tasks: list[str] = []
    done: list[str] = []
    context: list[str] = []
    stale: list[tuple[str, str]] = []
    for summary in summaries:
        sections = parse_sections(summary)
        for fact in sections["facts"]:
            slot = fact_slot(fact)
            replaced = [f for f in facts if slot and fact_slot(f) == slot and f != fact]
            stale += [(fact_value(f) or "", fact_value(fact) or "") for f in replaced]
            facts = [f for f in facts if not ((slot and fact_slot(f) == slot) or similarity(f, fact) >= 0.8)]
            facts.append(fact)
        tasks.extend(sections["tasks"])
        done.extend(sections["done"])
        context.extend(c for c in sections["context"] if detect_language(split_label(c)[1]) == language)
    tasks = [t for t in tasks if not any(similarity(t, d) >= 0.4 for d in done)]
    context = drop_stale(context, stale)
    # Newest facts first, so that they are the ones kept when not all fit.
    return compose(language, facts=facts[::-1], tasks=tasks, done=done[-3:], context=context, limit=limit).text
