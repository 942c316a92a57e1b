"""A summary's sections ("Facts: ... Open tasks: ... Context: ..."), their
labels in each language, and reading a summary back into them."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from memories.extraction.text import (
    is_speaker_name,
    split_sentences,
)

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
ENDS_SENTENCE_RE = re.compile(r"[.!?。！？]$")
TRAILING_SEMICOLONS_RE = re.compile(r"[;；]+$")
_LABEL_RE = re.compile(r"^(?P<label>[^:：\n]{1,40}?)\s*[:：]\s*(?P<body>\S.*)$", re.S)

# What makes a sentence worth keeping: numbers and literals, names in the middle
# of a sentence (not the capital every sentence starts with), a person's own news.
NUMBER_RE = re.compile(r"\d")
LITERAL_HINT = re.compile(r"@|https?://|www\.|`")
MID_NAME_RE = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]+|(?<=[a-z,;:] )[A-Z]{2,}\b")
OWN_NEWS_RE = re.compile(r"\b(?:I|we|my|our)\b|我", re.I)
ECHO_RE = re.compile(r"^(?:noted|got it|sure|okay|ok|i'll|i will|switching|saved|done|understood|certainly)\b", re.I)


# What a fact is about decides whether it survives a full summary: who someone
# is and what can hurt them before contact details, places and plans, before tastes.
_FACT_WEIGHTS = (
    (re.compile(r"'s name is |叫|allergic|过敏|'s diet|饮食"), 0.9),
    (re.compile(r"@|phone|电话|邮箱|'s email| is travelling to |'s trip is |要去|的行程是|changed from |（原为"), 0.85),
    (re.compile(r" lives in |住在|budget|预算|deadline|截止|moving to|搬到|address|地址"), 0.8),
    (re.compile(r"'s \w+(?: \w+)? is [A-Z]| works (?:at|as) |工作|的(?:老婆|老公|妻子|丈夫|伴侣|对象)"), 0.75),
)
# Shares of the summary's length each section may take (context gets the rest).
MICRO_SHARES = {"facts": 0.45, "tasks": 0.3, "done": 0.1}
ROLLING_SHARES = {"facts": 0.62, "tasks": 0.25, "done": 0.06}


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


def localize_label(label: str, language: str) -> str:
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
