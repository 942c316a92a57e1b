"""The entry point: the facts one sentence states, corrections included
("changed my mind: aisle seats please")."""

from __future__ import annotations

import re

from memories.extraction.patterns.chinese import zh_facts
from memories.extraction.patterns.english import en_facts
from memories.extraction.patterns.values import USER, FactMatch, Subject, category, category_word_re, new_fact
from memories.extraction.text import detect_language
from memories.extraction.vocabulary import (
    CATEGORIES,
)

_EN_CORRECTION = re.compile(r"\b(changed my mind|change of plans?|on second thought|instead|rather than|make it|"
                            r"make that|let's go with|go with|"
                            r"switch(?:ing)?(?: me| us)? to)\b", re.I)
_ZH_CORRECTION = re.compile(r"(改主意|改成|换成|改为|而不是|还是换|不要了)")
_EN_OLD_VALUE = re.compile(r"\b(?:instead of|rather than|not)\s+(?:the\s+|a\s+|an\s+)?[\w\- ]+?(?=[,.;!?]|$)", re.I)
_ZH_OLD_VALUE = re.compile(r"(?:而不是|不要|不是)[^，。！？；,]*")


_EN_TOPIC = re.compile(r"\bchanged my mind (?:about|on) (?:the |my |our )?([a-z]+(?: [a-z]+)?)", re.I)


def _topic_category(topic: str) -> str | None:
    """The category a topic names ("seats" -> seat, "coffee" -> drink)."""
    for word in (topic.lower(), topic.lower().split()[-1]):
        singular = re.sub(r"(?<=[a-z])s$", "", word)
        if singular in CATEGORIES:
            return singular
        found = category(word)
        if found:
            return found
    return None


def match_correction(sentence: str, speaker: Subject) -> FactMatch | None:
    """A preference changed without a verb of liking: "I changed my mind about
    seats: aisle seats please", "make it green tea instead", "改成靠过道的座位".
    The fact takes the category's key, the same as the value it replaces."""
    zh = detect_language(sentence) == "zh"
    if not (_ZH_CORRECTION if zh else _EN_CORRECTION).search(sentence):
        return None
    rest = (_ZH_OLD_VALUE if zh else _EN_OLD_VALUE).sub(" ", sentence)
    lowered = rest.lower()
    best: tuple[int, str, str] | None = None
    for name, words in CATEGORIES.items():
        for word in words:
            if word.isascii():
                hit = word in lowered and category_word_re(word).search(lowered)
                surface = rest[hit.start():hit.end()] if hit else ""
            else:
                hit = word in rest
                surface = word
            if hit and (best is None or len(word) > best[0]):
                best = (len(word), name, surface)
    if best is None:
        return None
    _, name, surface = best
    # "changed my mind about the kitchen: sage green" speaks of a kitchen, not
    # of a favourite colour: the topic, when named, must be the category's.
    topic = _EN_TOPIC.search(sentence) if not zh else None
    if topic and _topic_category(topic.group(1)) != name:
        return None
    value = surface.strip()
    return new_fact("prefer", f"{speaker.key}.preference.{name}", value, speaker, zh, confidence=0.75)


def match_facts(sentence: str, speaker: Subject = USER) -> list[FactMatch]:
    """Facts one sentence of `speaker` states: about the speaker, about people
    they name by relation or by name. One fact per key."""
    zh = detect_language(sentence) == "zh"
    found = zh_facts(sentence, speaker) if zh else en_facts(sentence, speaker)
    out: list[FactMatch] = []
    seen: set[str] = set()
    for fact in found:
        if fact.key not in seen:
            seen.add(fact.key)
            out.append(fact)
    if not out:
        correction = match_correction(sentence, speaker)
        if correction and correction.key not in seen:
            out.append(correction)
    return out
