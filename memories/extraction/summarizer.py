"""Extractive summaries that follow the summary convention's four rules:
keep facts, preferences, open tasks and context; drop greetings,
acknowledgements, repetition and tool-call detail; write in the conversation's
own language; stay within 500 characters.

A summary is written in sections ("Facts: ... Open tasks: ... Context: ..." or
"事实：… 待办：… 背景：…") so that a later merge (the rolling summary, a macro
summary) can re-read its parts. Each context sentence keeps its speaker
("Nate: ...", "User: ..."); sentences of one speaker in a row share the label,
and a re-read gives each of them that speaker again. Text written by another
provider, without sections, is read back as context sentences.

Literals (e-mails, URLs, numbers, code) pass through untouched: sentences are
split and clipped around them, never inside.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memories.extraction.text import (
    clip,
    covered,
    detect_language,
    is_speaker_name,
    overlap_ratio,
    similarity,
    split_sentences,
    stems,
    terms,
    turn_sentences,
)
from memories.extraction.types import Turn

SUMMARY_MAX_CHARS = 500
LABELS = {
    "en": {"facts": "Facts: ", "tasks": "Open tasks: ", "done": "Done: ", "context": "Context: ",
           "user": "User", "assistant": "Assistant", "said": ": ", "sep": "; ", "end": ". "},
    "zh": {"facts": "事实：", "tasks": "待办：", "done": "已完成：", "context": "背景：",
           "user": "用户", "assistant": "助手", "said": "：", "sep": "；", "end": "。"},
}
_ROLE_LABELS = {"User": "user", "Assistant": "assistant", "用户": "user", "助手": "assistant"}
_SECTION_RE = re.compile(r"(Facts: |Open tasks: |Done: |Context: |事实：|待办：|已完成：|背景：)")
_SECTION_NAMES = {"Facts: ": "facts", "事实：": "facts", "Open tasks: ": "tasks", "待办：": "tasks",
                  "Done: ": "done", "已完成：": "done", "Context: ": "context", "背景：": "context"}
_ENDS_SENTENCE_RE = re.compile(r"[.!?。！？]$")
_TRAILING_SEMICOLONS_RE = re.compile(r"[;；]+$")
_LABEL_RE = re.compile(r"^(?P<label>[^:：\n]{1,40}?)\s*[:：]\s*(?P<body>\S.*)$", re.S)

# What makes a sentence worth keeping: numbers and literals, names in the middle
# of a sentence (not the capital every sentence starts with), a person's own news.
_NUMBER_RE = re.compile(r"\d")
_LITERAL_HINT = re.compile(r"@|https?://|www\.|`")
_MID_NAME_RE = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]+|(?<=[a-z,;:] )[A-Z]{2,}\b")
_OWN_NEWS_RE = re.compile(r"\b(?:I|we|my|our)\b|我", re.I)
_ECHO_RE = re.compile(r"^(?:noted|got it|sure|okay|ok|i'll|i will|switching|saved|done|understood|certainly)\b", re.I)


# What a fact is about decides whether it survives a full summary: who someone
# is and what can hurt them before contact details, places and plans, before tastes.
_FACT_WEIGHTS = (
    (re.compile(r"'s name is |叫|allergic|过敏|'s diet|饮食"), 0.9),
    (re.compile(r"@|phone|电话|邮箱|'s email"), 0.85),
    (re.compile(r" lives in |住在|budget|预算|deadline|截止|moving to|搬到|address|地址"), 0.8),
    (re.compile(r"'s \w+(?: \w+)? is [A-Z]| works (?:at|as) |工作|的(?:老婆|老公|妻子|丈夫|伴侣|对象)"), 0.75),
)
# Shares of the summary's length each section may take (context gets the rest).
MICRO_SHARES = {"facts": 0.45, "tasks": 0.3, "done": 0.1}
ROLLING_SHARES = {"facts": 0.5, "tasks": 0.25, "done": 0.08}


def fact_weight(fact: str) -> float:
    for pattern, weight in _FACT_WEIGHTS:
        if pattern.search(fact):
            return weight
    return 0.6


@dataclass(frozen=True)
class Piece:
    """One item of a summary section, with the messages it was made from and
    its rank among its section's items (lower is kept first)."""

    text: str
    sources: tuple[str, ...] = ()
    priority: float = 0.0


@dataclass(frozen=True)
class Composed:
    text: str
    sources: list[str]


# Composition renders its context once per candidate it tries, splitting the
# same items' labels again each time.
@functools.lru_cache(maxsize=1024)
def split_label(item: str) -> tuple[str | None, str]:
    """("Nate", "I won ...") for "Nate: I won ..."; (None, item) without a speaker."""
    match = _LABEL_RE.match(item)
    if match:
        label = match.group("label").strip()
        if label in _ROLE_LABELS or is_speaker_name(label):
            return label, match.group("body").strip()
    return None, item


def _localize_label(label: str, language: str) -> str:
    role = _ROLE_LABELS.get(label)
    return LABELS[language][role] if role else label


def parse_sections(summary: str) -> dict[str, list[str]]:
    """The parts of a summary written by `compose`; free text reads as context.
    Context sentences come back one by one, each with its speaker."""
    sections: dict[str, list[str]] = {"facts": [], "tasks": [], "done": [], "context": []}
    if not summary:
        return sections
    parts = _SECTION_RE.split(summary)
    if len(parts) == 1:
        sections["context"] = _context_items(summary)
        return sections
    if parts[0].strip():
        sections["context"].extend(_context_items(parts[0]))
    for label, body in zip(parts[1::2], parts[2::2], strict=False):
        name = _SECTION_NAMES[label]
        if name == "context":
            sections[name].extend(_context_items(body))
        else:
            body = body.strip()
            body = body[:-1] if body.endswith(("。", ".")) else body
            sections[name].extend(s.strip() for s in re.split(r"[;；]\s+|；", body) if s.strip())
    return sections


def _context_items(text: str) -> list[str]:
    items: list[str] = []
    speaker: str | None = None
    for sentence in split_sentences(text.strip()):
        label, body = split_label(sentence)
        if label is not None:
            speaker = label
        items.append(f"{speaker}: {body}" if speaker else body)
    return items


# --- Scoring ----------------------------------------------------------------------


def score_sentence(sentence: str, *, role: str, human: bool, position: float,
                   content: list[str] | None = None) -> float:
    """How much a sentence is worth keeping. No role weighs less in a dialog of
    two people; in an assistant dialog the assistant's echoes and offers do.
    `content`: the sentence's `terms`, when the caller has them already."""
    content = terms(sentence) if content is None else content
    score = 1.0 if (human or role == "user") else 0.85
    score += min(len(content), 10) * 0.06
    if len(content) < 3:
        score -= 0.4
    if len(sentence) > 240:
        score -= 0.3
    if _NUMBER_RE.search(sentence):
        score += 0.25
    if _LITERAL_HINT.search(sentence):
        score += 0.2
    names = len(_MID_NAME_RE.findall(sentence))
    score += 0.2 if names == 1 else 0.3 if names > 1 else 0.0
    if _OWN_NEWS_RE.search(sentence) and (human or role == "user"):
        score += 0.15
    if sentence.rstrip().endswith(("?", "？")):
        score -= 0.1 if (role == "user" and not human) else 0.35
    if not human and role == "assistant" and _ECHO_RE.match(sentence):
        score -= 0.25
    return score + 0.25 * position  # later turns carry the current state


@dataclass
class Candidate:
    score: float
    label: str
    sentence: str
    sources: list[str]
    order: int

    @property
    def text(self) -> str:
        return f"{self.label}: {self.sentence}"


def speaker_label(turn: Turn, language: str, user_name: str | None = None) -> str:
    if turn.speaker:
        return turn.speaker
    if turn.role == "user" and user_name:
        return user_name
    return LABELS[language]["user" if turn.role == "user" else "assistant"]


def context_sentences(
    turns: Iterable[Turn], language: str, exclude: Iterable[str] = (), *, human: bool = False,
    user_name: str | None = None,
) -> list[Candidate]:
    """Scored context sentences with their speakers and messages: small talk,
    tool output and repetition removed, sentences in another language than
    `language` demoted. The turns are the batch's conversation turns, client
    prefixes already stripped."""
    turns = [t for t in turns if t.role in {"user", "assistant"}]
    # A sentence the facts and tasks already say (together) is repetition.
    excluded = " ".join(exclude)
    chosen: list[Candidate] = []
    for index, turn in enumerate(turns):
        position = index / max(len(turns) - 1, 1)
        label = speaker_label(turn, language, user_name)
        for sentence, small_talk in turn_sentences(turn.text):
            if small_talk:
                continue
            content = terms(sentence)
            if len(content) < 2:
                continue
            if excluded and covered(sentence, excluded) >= 0.6:
                continue
            score = score_sentence(sentence, role=turn.role, human=human, position=position, content=content)
            if detect_language(sentence) != language:
                score *= 0.3
            duplicate = next((c for c in chosen if similarity(sentence, c.sentence) >= 0.6), None)
            if duplicate is not None:
                # Repetition: keep one copy, the later wording, made from both messages.
                duplicate.score = max(score, duplicate.score)
                duplicate.sentence, duplicate.label, duplicate.order = sentence, label, len(chosen) + index * 1000
                if turn.message_id not in duplicate.sources:
                    duplicate.sources.append(turn.message_id)
                continue
            chosen.append(Candidate(score, label, sentence, [turn.message_id], index * 1000 + len(chosen)))
    chosen.sort(key=lambda c: c.order)
    return chosen


def without(candidates: list[Candidate], exclude: Iterable[str]) -> list[Candidate]:
    """The candidates that the excluded texts (facts, tasks) do not already say."""
    excluded = " ".join(exclude)
    if not excluded:
        return list(candidates)
    return [c for c in candidates if covered(c.sentence, excluded) < 0.6]


# --- Composition -------------------------------------------------------------------


def _piece(item: str | Piece, priority: float = 0.0) -> Piece:
    return item if isinstance(item, Piece) else Piece(item, (), priority)


def _render_context(items: Sequence[str], language: str) -> str:
    labels = LABELS[language]
    out: list[str] = []
    last: str | None = None
    for item in items:
        label, body = split_label(item)
        if not _ENDS_SENTENCE_RE.search(body):
            body += labels["end"].strip()
        if label is not None:
            label = _localize_label(label, language)
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
            text = _TRAILING_SEMICOLONS_RE.sub("", text)
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


# --- Merging --------------------------------------------------------------------------

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
    from memories.extraction.patterns import category

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
