"""How a passage of a message reads in a prompt: who said it and when, then
the words.

Many clients write the speaker and time into the message itself
(`[7:31 pm on 8 May, 2023] Nate: ...`); then that prefix is the passage's
label, repeated for every later window of the message so that no window
loses its speaker. Otherwise the label is the message's time and role.
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
    """`message`: a row with `content`, `role` and `created_at`."""
    text = content_text(message["content"])
    prefix, _ = split_client_prefix(text)
    window = " ".join(text[start:end].split())
    if prefix:
        if start == 0:
            return window
        return f"{prefix} … {window}"
    when = message["created_at"].strftime("%Y-%m-%d %H:%M")
    return f"[{when}] {message['role']}: {window}"
