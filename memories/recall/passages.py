"""How a passage of a message reads in a prompt: who said it and when, then
the words.

Many clients write the speaker and time into the message itself
(`[7:31 pm on 8 May, 2023] Nate: ...`); then the speaker is the client's and
the day the one the prefix names, else the role and the day it was stored.
Every window keeps its speaker; the day is written once per group.
"""

from __future__ import annotations

import re

from memories.llm.tokens import content_text

# `[time] Name: ` or `Name: ` at the very start of a message; a name is one to
# four capitalised words (or a CJK name), so "Note: ..." in prose is rare enough.
CLIENT_PREFIX_RE = re.compile(
    r"^\s*(?:\[(?P<time>[^\]\n]{1,60})\]\s*)?"
    r"(?:(?P<speaker>(?:[A-Z][\w'.-]{0,30})(?: [A-Z][\w'.-]{0,30}){0,3}|[\u4e00-\u9fff]{1,6})\s?[:：]\s*)?"
)


def split_client_prefix(text: str) -> tuple[str, str]:
    """(the prefix as written, the rest)."""
    match = CLIENT_PREFIX_RE.match(text)
    if not match or not (match.group("time") or match.group("speaker")):
        return "", text
    return text[:match.end()].strip(), text[match.end():]


def render_passage(message: dict, start: int, end: int) -> str:
    """`message`: a row with `content`, `role` and `created_at`. The full
    label, for a passage read on its own."""
    day, line = passage_parts(message, start, end)
    return f"[{day}] {line}"


def passage_parts(message: dict, start: int, end: int) -> tuple[str, str]:
    """(the day it was said, `Speaker: words`): the day is written once above
    each group of passages of one day (`selection._render`), not on every
    window: a label `[1:56 pm on 8 May, 2023] Nate:` was 17 of a passage's
    41 tokens. The speaker is the client's (`Nate`) or the role. The day is
    the client's ("8 May, 2023" of "1:56 pm on 8 May, 2023") or the day the
    message was stored."""
    text = content_text(message["content"])
    prefix, rest = split_client_prefix(text)
    window = " ".join(text[max(start, len(text) - len(rest)) if prefix else start:end].split())
    speaker, day = message["role"], message["created_at"].strftime("%Y-%m-%d")
    if prefix:
        match = CLIENT_PREFIX_RE.match(text)
        speaker = match.group("speaker") or speaker
        when = match.group("time") or ""
        if " on " in when:
            day = when.rsplit(" on ", 1)[-1].strip()
    return day, f"{speaker}: {window}"
