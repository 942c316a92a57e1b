"""What every recognizer shares: a fact's subject (the speaker, or someone
named by relation or name), its value cleaned of the clause around it, and
the preference categories."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from memories.extraction.text import collapse_space, terms
from memories.extraction.vocabulary import (
    CATEGORIES,
    EN_TEMPLATES,
    IMPORTANCE,
    NOT_NAMES,
    RELATIONS,
    ZH_TEMPLATES,
)


@dataclass(frozen=True)
class Subject:
    """Whom a fact is about: its key prefix and how each language names it."""

    key: str
    en: str
    zh: str
    speaker: bool = True  # the person speaking (as opposed to someone they mention)


USER = Subject("user", "User", "用户")


def slug(text: str) -> str:
    text = re.sub(r"[^\w\u4e00-\u9fff]+", "_", collapse_space(text).lower())
    return text.strip("_")[:60]


def speaker_subject(*, role: str, speaker: str | None, human: bool) -> Subject:
    """The subject of a speaker's first-person facts: named people by name;
    the user of an assistant as `user`; the second person of an unnamed
    human dialog by their role."""
    if speaker:
        return Subject(f"person.{slug(speaker)}", speaker, speaker)
    if role == "assistant" and human:
        return Subject("assistant", "Assistant", "助手")
    return USER


@dataclass(frozen=True)
class FactMatch:
    key: str
    value: str
    content: str
    importance: float
    confidence: float
    kind: str = "attribute"
    subject: Subject = USER
    label: tuple[str, str] = ("", "")

    def render(self, zh: bool) -> str:
        """The fact written in English or Chinese (the value as it was said)."""
        template = (ZH_TEMPLATES if zh else EN_TEMPLATES)[self.kind]
        return template.format(s=self.subject.zh if zh else self.subject.en, v=self.value,
                               a=self.label[1] if zh else self.label[0])


def new_fact(kind: str, key: str, value: str, subject: Subject, zh: bool, *, importance: float | None = None,
          confidence: float = 0.85, label: tuple[str, str] = ("", "")) -> FactMatch:
    match = FactMatch(key=key, value=value, content="", importance=importance or IMPORTANCE.get(kind, 0.6),
                      confidence=confidence, kind=kind, subject=subject, label=label)
    return replace(match, content=match.render(zh))



_ZH_VERB_PREFIX = re.compile(r"^(喝|吃|用|听|看|玩|去|坐|住|穿)")
_EN_TRAILING = re.compile(
    r"\s+(now|these days|nowadays|instead|anymore|any more|more|a lot|too|as well|best|most|better|honestly|"
    r"actually|please|though|over .*|rather than .*|instead of .*|than .*)$", re.I)
_EN_CLAUSE_BREAK = re.compile(r"\s+(?:and|but|so|because|which|who|since|while|though|although|as|when|where|if|for|in case|"
                              r"with whom|that)\s+", re.I)
_EN_CLAUSE_BREAK_KEEP_AND = re.compile(r"\s+(?:but|so|because|which|who|since|while|though|although|when|where|if|"
                                       r"in case|that)\s+", re.I)
_EN_TIME_TAIL = re.compile(r"\s+(?:last|this|next)\s+(?:week|month|year|weekend)$|\s+(?:yesterday|today|recently|lately)$|"
                           r"\s+(?:for|since)\s+\S+(?:\s+\S+)?$", re.I)
# "在设计院做建筑设计师真的太累了": the value ends where the remark begins.
ZH_REMARK = re.compile(r"(真的|实在|太|很|非常|特别|挺|也|都|还|但|可是|就|了).*$")
_ZH_TRAILING = re.compile(r"(了|啦|呢|吧|哦|呀|的|现在|一点|多了|更多|而不是.*|不是.*)$")
# A preference's object is a thing, not a clause about someone.
EN_NOT_OBJECT = re.compile(r"^(your|that|this|it|its|these|those|him|her|them|you|me|us|what|how|when|where|why|if|"
                            r"whether|know|ask|see|hear|think|say|tell|the idea|the way|to (?:know|ask|see|say|think))\b",
                            re.I)
EN_CLAUSE_VERB = re.compile(r"\b(would|will|is|are|was|were|am|be|been|have|has|had|can|could|should|thought|think|"
                             r"said|says|do|does|did|going|gonna|wanna|got)\b", re.I)
ZH_NOT_OBJECT = re.compile(r"^(你|这|那|它|他|她|知道|问)")
PHONE_RE = re.compile(r"\+?\d[\d\s().\-]{5,}\d")
EMAIL_RE = re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
_NAME_WORD = re.compile(r"[A-Z][A-Za-z\-']+")


def clean_value(value: str, zh: bool, *, keep_and: bool = False, keep_time: bool = False,
                 keep_article: bool = False) -> str:
    value = collapse_space(value).strip(" \"'“”‘’「」:：")
    for _ in range(2):
        value = (_ZH_TRAILING if zh else _EN_TRAILING).sub("", value).strip()
    if zh:
        value = _ZH_VERB_PREFIX.sub("", value)
    else:
        # One clause: "Alice and I live in Berlin" -> "Alice".
        value = (_EN_CLAUSE_BREAK_KEEP_AND if keep_and else _EN_CLAUSE_BREAK).split(value)[0]
        if not keep_time:
            value = _EN_TIME_TAIL.sub("", value)
        value = re.sub(r"^(?:always|usually|mostly|normally|basically|just)\s+", "", value, flags=re.I)
        if not keep_article:
            value = re.sub(r"^(to|the|a|an)\s+", "", value, flags=re.I)
    return value.strip(" \"'“”‘’「」,，")


def value_ok(value: str, zh: bool, *, max_words: int = 8) -> bool:
    return bool(value) and len(value) <= 80 and (zh or len(value.split()) <= max_words)


def name_value(text: str) -> str | None:
    words = []
    for word in text.split()[:3]:
        if not _NAME_WORD.fullmatch(word) or word in NOT_NAMES:
            break
        words.append(word)
    return " ".join(words) or None


@functools.cache
def category_word_re(word: str) -> re.Pattern:
    """A category word as a whole word, plural allowed (compiled once: there
    are more of them than `re` keeps compiled)."""
    return re.compile(rf"(?<![a-z]){re.escape(word)}(?:s|es)?(?![a-z])")


def category(value: str) -> str | None:
    """The preference category of a thing ("window seats" -> seat), if known."""
    lowered = value.lower()
    best: tuple[int, str] | None = None
    for name, words in CATEGORIES.items():
        for word in words:
            # The substring test first: most words are absent, and it is exact for those.
            hit = (word in lowered and category_word_re(word).search(lowered)) if word.isascii() else word in value
            if hit and (best is None or len(word) > best[0]):
                best = (len(word), name)
    return best[1] if best else None


def preference(kind: str, value: str, subject: Subject, zh: bool, confidence: float) -> FactMatch | None:
    if re.search(r"@|https?://|www\.", value):
        return None  # "I no longer use old@example.com" is about an address, not a taste
    cleaned = clean_value(value, zh, keep_and=True)
    if not zh:
        cleaned = re.sub(r"^being\s+", "", cleaned, flags=re.I)
    if not value_ok(cleaned, zh, max_words=6):
        return None
    if zh:
        if ZH_NOT_OBJECT.match(cleaned):
            return None
    elif EN_NOT_OBJECT.match(cleaned) or EN_CLAUSE_VERB.search(cleaned):
        return None
    found = category(cleaned)
    if kind == "dislike":
        key = f"{subject.key}.dislike.{slug(cleaned)}"
    elif kind == "no_longer":
        # Its own key unless the extractor finds the fact it ends (by value):
        # "I no longer drink coffee" must not replace "User prefers tea".
        key = f"{subject.key}.preference.{slug(cleaned)}"
    elif found == "diet" and kind in {"prefer", "like"}:
        return new_fact("diet", f"{subject.key}.preference.diet", cleaned, subject, zh, confidence=confidence)
    else:
        key = f"{subject.key}.preference.{found or slug(cleaned)}"
    if not terms(cleaned):
        return None
    importance = IMPORTANCE[kind] + (0.05 if found else 0.0)
    return new_fact(kind, key, cleaned, subject, zh, importance=round(importance, 2), confidence=confidence)



REL_EN = "|".join(sorted((re.escape(k) for k in RELATIONS if k.isascii()), key=len, reverse=True))
REL_ZH = "|".join(sorted((re.escape(k) for k in RELATIONS if not k.isascii()), key=len, reverse=True))
SUBJ_EN = (
    r"(?:(?P<self>\bI)(?=['’\s])"
    r"|\b(?P<own>[Mm]y|[Oo]ur)\s+(?P<rel>" + REL_EN + r")\b(?:\s*,?\s+(?P<relname>[A-Z][a-z]+)\b)?"
    r"|(?P<name>\b[A-Z][a-z]+(?:\s[A-Z][a-z]+)?))"
)
SUBJ_ZH = r"(?:我的?(?P<rel>" + REL_ZH + r")(?P<relname>[A-Z][a-z]+|[\u4e00-\u9fff]{2,3})?|(?P<self>我))"
_CLAUSE_OPENERS = frozenset([
    "and", "but", "so", "because", "since", "also", "actually", "now", "btw", "well", "oh", "plus"
])


def _at_clause_start(sentence: str, start: int) -> bool:
    before = sentence[:start].rstrip()
    if not before or before[-1] in ",;:.!?—-–(\"“":
        return True
    return before.split()[-1].lower() in _CLAUSE_OPENERS


def match_subject(match: re.Match, sentence: str, speaker: Subject, zh: bool) -> Subject | None:
    groups = match.groupdict()
    if groups.get("self"):
        return speaker
    rel = groups.get("rel")
    if rel:
        if not zh and not _at_clause_start(sentence, match.start()):
            return None
        rel_en, rel_zh = RELATIONS[rel.lower() if rel.isascii() else rel]
        relname = groups.get("relname")
        if relname in NOT_NAMES:
            relname = None
        en = f"{speaker.en}'s {rel_en}" + (f" {relname}" if relname else "")
        zh_name = f"{speaker.zh}的{rel_zh}" + (relname or "")
        key = f"person.{slug(relname)}" if relname else f"{speaker.key}.{slug(rel_en)}"
        return Subject(key, en, zh_name, speaker=False)
    name = groups.get("name")
    if name:
        words = name.split()
        if words[0] in NOT_NAMES or not _at_clause_start(sentence, match.start()):
            return None
        if len(words) > 1 and words[1] in NOT_NAMES:
            name = words[0]
        if name == speaker.en:
            return speaker
        return Subject(f"person.{slug(name)}", name, name, speaker=False)
    return None
