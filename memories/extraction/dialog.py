"""Who is talking: chat-client prefixes read into speaker and time, and the
kind of dialog (a user with an assistant, or two people).

A conversation imported from a chat client often carries "[7:31 pm] Nate:"
in front of every message. Left in the text, the prefix looks like detail to
the summarizer and like content to the fact rules; stripped and kept on the
turn, it names the speaker of each summary sentence instead.
"""

from __future__ import annotations

import dataclasses
import re

from memories.extraction.injected import strip_injected
from memories.extraction.text import parse_turn_prefix
from memories.extraction.types import Turn

CONVERSATION_ROLES = frozenset({"user", "assistant"})
HUMAN = "human"
ASSISTANT = "assistant"

# Phrases an assistant writes and a person chatting with a friend rarely does.
_ASSISTANT_STYLE = re.compile(
    r"\b(how (?:can|may) i (?:help|assist)|i can help|happy to help|glad to help|let me (?:know|check|look|find|see)|"
    r"here (?:are|is) (?:a |some |the )?|would you like|do you want me to|i'?ll (?:book|hold|remind|add|set|send you|"
    r"note|flag|update|switch|look|check|find|suggest|use|plan|keep|make sure|pencil)|noted\b|got it\b|i recommend|"
    r"i suggest|i'd suggest|i would suggest|you (?:could|can|might|should) (?:try|consider|use|take|book)|"
    r"as an ai|i'm an ai|i am an ai|language model|feel free to|hope this helps|certainly|of course!)",
    re.I,
)
_ZH_ASSISTANT_STYLE = re.compile(r"(有什么可以帮|我可以帮|帮您|为您|您可以|建议您|建议你|我记下了|我来帮|已更新|我查一下|我会帮你)")
_LIST_ITEM_RE = re.compile(r"^\s*(?:[-*•]|\d+\.)\s", re.M)
# What a person says of their own life: past events, family, feelings.
_PERSONAL = re.compile(
    r"\b(?:i|we)\s+(?:just\s+|finally\s+|also\s+|recently\s+)?(?:went|got|had|saw|made|did|won|bought|took|met|"
    r"started|finished|tried|visited|watched|played|adopted|painted|ran|cooked|moved|lost|found|felt|feel|love|"
    r"hate|miss|was|were|am|have been|'ve been)\b|\bi'm\s+\w+ing\b|\bi (?:have|had|need) to\b|\bmy\s+(?:mom|mother|dad|father|sister|brother|wife|husband|"
    r"partner|kids?|son|daughter|friends?|family|boyfriend|girlfriend|dog|cat|boss)\b",
    re.I,
)
# How friends write: reactions, exclamations, questions about the other's life.
_CASUAL = re.compile(
    r"\b(?:haha\w*|lol|omg|wow|yum|yay|no way|congrats|congratulations|awesome|cool|oof|ugh|aww?|dude|bro)\b|"
    r"\bhow (?:have|are|was|were) you\b|\bwhat (?:about|will) you\b|\bare you (?:still|going)\b",
    re.I,
)


def prepare_turns(turns: list[Turn]) -> list[Turn]:
    """The batch's conversation turns (user and assistant; tool calls, tool
    results and system prompts are not conversation content) with client
    prefixes stripped into `speaker` and `time_text`, and without what the
    service itself injected into a prompt (`injected`): a turn that held only
    that is no turn.

    A timed prefix ("[7:31 pm] Nate:") is always one. A bare "Nate:" is taken
    as a speaker only when such prefixes run through the batch (two turns or
    more, or every turn): one "Update:" in a message is the message's own text.
    """
    parsed: list[tuple[Turn, str | None, str | None, str]] = []
    bare = 0
    for turn in turns:
        if turn.role not in CONVERSATION_ROLES:
            continue
        text = strip_injected(turn.text)
        if text is not turn.text:
            if not text.strip():
                continue
            turn = dataclasses.replace(turn, text=text)
        speaker, time_text, body = parse_turn_prefix(turn.text)
        if speaker and not time_text:
            bare += 1
        parsed.append((turn, speaker, time_text, body))
    trust_bare = bare >= 2 or (parsed and bare == len(parsed))
    out: list[Turn] = []
    for turn, speaker, time_text, body in parsed:
        if speaker and not time_text and not trust_bare:
            speaker, body = None, turn.text
        if speaker is None and time_text is None:
            out.append(turn)
            continue
        out.append(dataclasses.replace(
            turn, text=body, speaker=turn.speaker or speaker, time_text=turn.time_text or time_text,
        ))
    return out


def dialog_mode(turns: list[Turn]) -> str:
    """HUMAN when two people talk (the client named the speakers, or both roles
    write like people), else ASSISTANT. In a human dialog no role is the
    assistant: both speakers' sentences weigh the same and both state facts."""
    if sum(1 for t in turns if t.speaker) >= 2:
        return HUMAN
    replies = [t for t in turns if t.role == "assistant" and t.text.strip()]
    if len(replies) < 2:
        return ASSISTANT
    # HUMAN takes all three: few long replies, few in an assistant's style,
    # many that sound like a person. Each count stops once its answer is
    # known (a batch's extraction runs this over every reply).
    count = len(replies)
    if sum(1 for t in replies if len(t.text) > 400) / count > 0.2:
        return ASSISTANT
    styled = 0
    for t in replies:
        if (_ASSISTANT_STYLE.search(t.text) or _ZH_ASSISTANT_STYLE.search(t.text) or "```" in t.text
                or _LIST_ITEM_RE.search(t.text)):
            styled += 1
            if styled / count > 0.2:
                return ASSISTANT
    people = 0
    for index, t in enumerate(replies):
        if _PERSONAL.search(t.text) or (len(t.text) < 200 and _CASUAL.search(t.text)):
            people += 1
            if people / count >= 0.4:
                return HUMAN
        elif (people + count - index - 1) / count < 0.4:
            return ASSISTANT  # too few replies left to reach the share
    return ASSISTANT
