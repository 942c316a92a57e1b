"""Rule-based fact recognizers for the offline extractor, English and Chinese.

Each recognizer reads one sentence of one speaker and returns the facts it
states, about the speaker ("I'm allergic to cats"), about someone the speaker
names by relation ("my partner Sam is allergic to peanuts", "my sister lives
in Denver") or by name ("Tom is allergic to peanuts"). A fact has a key made of
its subject and attribute (`user.location`, `person.sam.allergy.peanuts`), so
that a later value of the same key replaces the earlier one: corrections
("changed my mind: aisle seats please", "our budget is now $4,000") reuse the
key on purpose.

Precision comes before recall: only known attributes, relations and
preference objects make facts; an opinion, a request or a clause that merely
looks like "I like ..." makes none.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from memories.extraction.text import collapse_space, detect_language, terms
from memories.extraction.vocabulary import (
    ATTRIBUTE_IMPORTANCE,
    ATTRIBUTE_LABELS,
    ATTRIBUTES,
    CATEGORIES,
    EN_TEMPLATES,
    FAVORITE_WORDS,
    IMPORTANCE,
    NOT_ATTRIBUTES,
    NOT_NAMES,
    OCCUPATIONS,
    RELATIONS,
    SINGLE_RELATIONS,
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


def _fact(kind: str, key: str, value: str, subject: Subject, zh: bool, *, importance: float | None = None,
          confidence: float = 0.85, label: tuple[str, str] = ("", "")) -> FactMatch:
    match = FactMatch(key=key, value=value, content="", importance=importance or IMPORTANCE.get(kind, 0.6),
                      confidence=confidence, kind=kind, subject=subject, label=label)
    return replace(match, content=match.render(zh))


# --- Values ------------------------------------------------------------------------

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
_ZH_REMARK = re.compile(r"(真的|实在|太|很|非常|特别|挺|也|都|还|但|可是|就|了).*$")
_ZH_TRAILING = re.compile(r"(了|啦|呢|吧|哦|呀|的|现在|一点|多了|更多|而不是.*|不是.*)$")
# A preference's object is a thing, not a clause about someone.
_EN_NOT_OBJECT = re.compile(r"^(your|that|this|it|its|these|those|him|her|them|you|me|us|what|how|when|where|why|if|"
                            r"whether|know|ask|see|hear|think|say|tell|the idea|the way|to (?:know|ask|see|say|think))\b",
                            re.I)
_EN_CLAUSE_VERB = re.compile(r"\b(would|will|is|are|was|were|am|be|been|have|has|had|can|could|should|thought|think|"
                             r"said|says|do|does|did|going|gonna|wanna|got)\b", re.I)
_ZH_NOT_OBJECT = re.compile(r"^(你|这|那|它|他|她|知道|问)")
_PHONE_RE = re.compile(r"\+?\d[\d\s().\-]{5,}\d")
_EMAIL_RE = re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
_NAME_WORD = re.compile(r"[A-Z][A-Za-z\-']+")


def _clean_value(value: str, zh: bool, *, keep_and: bool = False, keep_time: bool = False,
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


def _value_ok(value: str, zh: bool, *, max_words: int = 8) -> bool:
    return bool(value) and len(value) <= 80 and (zh or len(value.split()) <= max_words)


def _name_value(text: str) -> str | None:
    words = []
    for word in text.split()[:3]:
        if not _NAME_WORD.fullmatch(word) or word in NOT_NAMES:
            break
        words.append(word)
    return " ".join(words) or None


@functools.cache
def _category_word_re(word: str) -> re.Pattern:
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
            hit = (word in lowered and _category_word_re(word).search(lowered)) if word.isascii() else word in value
            if hit and (best is None or len(word) > best[0]):
                best = (len(word), name)
    return best[1] if best else None


def _preference(kind: str, value: str, subject: Subject, zh: bool, confidence: float) -> FactMatch | None:
    if re.search(r"@|https?://|www\.", value):
        return None  # "I no longer use old@example.com" is about an address, not a taste
    cleaned = _clean_value(value, zh, keep_and=True)
    if not zh:
        cleaned = re.sub(r"^being\s+", "", cleaned, flags=re.I)
    if not _value_ok(cleaned, zh, max_words=6):
        return None
    if zh:
        if _ZH_NOT_OBJECT.match(cleaned):
            return None
    elif _EN_NOT_OBJECT.match(cleaned) or _EN_CLAUSE_VERB.search(cleaned):
        return None
    found = category(cleaned)
    if kind == "dislike":
        key = f"{subject.key}.dislike.{slug(cleaned)}"
    elif kind == "no_longer":
        # Its own key unless the extractor finds the fact it ends (by value):
        # "I no longer drink coffee" must not replace "User prefers tea".
        key = f"{subject.key}.preference.{slug(cleaned)}"
    elif found == "diet" and kind in {"prefer", "like"}:
        return _fact("diet", f"{subject.key}.preference.diet", cleaned, subject, zh, confidence=confidence)
    else:
        key = f"{subject.key}.preference.{found or slug(cleaned)}"
    if not terms(cleaned):
        return None
    importance = IMPORTANCE[kind] + (0.05 if found else 0.0)
    return _fact(kind, key, cleaned, subject, zh, importance=round(importance, 2), confidence=confidence)


# --- Subjects -------------------------------------------------------------------------

_REL_EN = "|".join(sorted((re.escape(k) for k in RELATIONS if k.isascii()), key=len, reverse=True))
_REL_ZH = "|".join(sorted((re.escape(k) for k in RELATIONS if not k.isascii()), key=len, reverse=True))
_SUBJ_EN = (
    r"(?:(?P<self>\bI)(?=['’\s])"
    r"|\b(?P<own>[Mm]y|[Oo]ur)\s+(?P<rel>" + _REL_EN + r")\b(?:\s*,?\s+(?P<relname>[A-Z][a-z]+)\b)?"
    r"|(?P<name>\b[A-Z][a-z]+(?:\s[A-Z][a-z]+)?))"
)
_SUBJ_ZH = r"(?:我的?(?P<rel>" + _REL_ZH + r")(?P<relname>[A-Z][a-z]+)?|(?P<self>我))"
_CLAUSE_OPENERS = frozenset([
    "and", "but", "so", "because", "since", "also", "actually", "now", "btw", "well", "oh", "plus"
])


def _at_clause_start(sentence: str, start: int) -> bool:
    before = sentence[:start].rstrip()
    if not before or before[-1] in ",;:.!?—-–(\"“":
        return True
    return before.split()[-1].lower() in _CLAUSE_OPENERS


def _subject(match: re.Match, sentence: str, speaker: Subject, zh: bool) -> Subject | None:
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


# --- English ------------------------------------------------------------------------

_V = r"(?P<val>(?:[^,.;!?\n]|(?<=\d)[.,](?=\d)|\.(?=\w))+)"
_BE = r"(?:'m|’m|'s|’s|'re|\s+am|\s+is|\s+are)"
_ADV = r"(?:\s+(?:also|now|still|very|much|just|always|[a-z]+ly))*"
_OCC = "|".join(re.escape(o) for o in OCCUPATIONS)
# (kind, cues, predicate): a predicate matches only text holding one of its
# cues (lowercase), so a sentence without any is not searched (each search
# tries the subject patterns at every word); no cues: always searched.
_EN_PREDICATES: list[tuple[str, tuple[str, ...], str]] = [
    ("allergy", ("allergic",), _BE + _ADV + r"\s+(?P<neg>no\s+longer\s+|not\s+)?allergic\s+to\s+" + _V),
    ("allergy", ("allergy",),
     r"\s+(?:has|have)\s+(?:an?\s+)?(?:severe\s+|serious\s+|bad\s+)?(?P<val>[a-z]+(?:\s[a-z]+)?)\s+allergy\b"),
    ("location", ("live", "reside", "living", "based", "located"),
     r"(?:" + _ADV + r"\s+(?:live|lives|reside|resides)|" + _BE + _ADV + r"\s+(?:living|based|located))\s+in\s+" + _V),
    # "Rahul finally packed up and moved to Copenhagen."
    ("location", ("moved",),
     r"(?:'ve|’ve|'s|\s+have|\s+has)?" + _ADV + r"(?:\s+[a-z]+){0,3}?(?:\s+and)?\s+moved\s+to\s+" + _V),
    ("moving", ("moving", "relocating"), _BE + _ADV + r"\s+(?:moving|relocating)\s+to\s+" + _V),
    ("employer", ("work",),
     r"(?:" + _ADV + r"\s+(?:work|works)|" + _BE + _ADV + r"\s+working)\s+(?:at|for)\s+" + _V),
    ("employer", ("start", "joined"),
     r"(?:'ve|’ve|\s+have|\s+has)?" + _ADV + r"\s+(?:started|joined|start|started working)\s+(?:at|with)\s+" + _V),
    ("not_employer", ("work",),
     _ADV + r"\s+(?:no longer|don't|do not|doesn't|does not)\s+(?:work|works)\s+(?:at|for)\s+" + _V),
    ("occupation", (), _BE + _ADV + r"\s+an?\s+(?P<val>(?:[a-z\-]+\s+)?(?:" + _OCC + r"))\b"),
    ("age", ("year", "yo"), _BE + r"\s+(?P<val>\d{1,3})\s+(?:years old|yo|year-old)\b"),
    ("diet", ("vegetarian", "vegan", "pescatarian", "gluten-free", "keto"),
     _BE + _ADV + r"\s+(?:a\s+)?(?P<val>vegetarian|vegan|pescatarian|gluten-free|keto)\b"),
    ("negated", ("n't", "n’t", "not", "no longer", "never"),
     _ADV + r"\s+(?P<neg>don't|don’t|do not|doesn't|doesn’t|does not|no longer|never)\s+(?:really\s+)?"
     r"(?:like|likes|enjoy|enjoys|want|wants|eat|eats|drink|drinks|use|uses)\s+" + _V),
    ("dislike", ("hate", "dislike", "stand", "detest"),
     _ADV + r"\s+(?:hate|hates|dislike|dislikes|can't stand|can’t stand|cannot stand|detest|detests)\s+" + _V),
    ("like", ("prefer", "like", "love", "enjoy", "adore"),
     _ADV + r"\s+(?:do\s+|does\s+)?(?P<verb>prefer|prefers|like|likes|love|loves|enjoy|enjoys|adore|adores)\s+" + _V),
    ("prefer", ("rather",),
     r"(?:'d|’d|\s+would)\s+rather\s+(?:have\s+|use\s+|drink\s+|eat\s+|take\s+|get\s+|go with\s+)?" + _V),
    ("prefer", ("switched",), r"(?:'ve|’ve|\s+have|\s+has)?" + _ADV + r"\s+switched\s+to\s+" + _V),
]
_EN_RULES = [(kind, cues, re.compile(_SUBJ_EN + r"(?i:" + predicate + r")")) for kind, cues, predicate in _EN_PREDICATES]
_EN_CUES = tuple(sorted({cue for _, cues, _ in _EN_RULES for cue in cues}))
# The letters outside ASCII that a case-insensitive pattern takes for ASCII
# ones: lowered as it reads them, so a cue test never misses what it would match.
_ASCII_LOOKALIKES = str.maketrans({"İ": "i", "ı": "i", "ſ": "s", "K": "k"})
_EN_NAME_RULES = [
    re.compile(r"\b(?i:my name is|my name's|i'm called|i am called|call me)\s+(?P<val>[A-Z][\w\-']*(?:\s+[A-Z][\w\-']*)?)"),
    re.compile(r"^(?:(?i:hi|hello|hey)(?:\s+there)?[,!.]*\s*)?(?:I'm|I’m|I am|(?i:this is))\s+(?P<val>[A-Z][\w\-']*(?:\s+[A-Z][\w\-']*)?)"
               r"(?=\s*(?:[,.!;]|$|\s+(?i:and|from|here|btw|by the way)\b))"),
]
_EN_ATTRIBUTE_RULES = [
    re.compile(r"\b(?P<own>[Mm]y|[Oo]ur)\s+(?P<attr>[a-z][a-z' \-]{1,40}?)\s+(?i:is now|'s now|is|are|'s|has changed to|"
               r"changed to|has changed,?\s*(?:it's|it is)|changed,?\s*(?:it's|it is|to))\s+" + _V),
    re.compile(r"\b(?i:please\s+)?(?i:change|update|set|switch)\s+(?P<own>my|our)\s+(?P<attr>[a-z][a-z' \-]{1,40}?)\s+to\s+" + _V),
]
# E-mails and sites said without "my email is": "reach me at ...", "new email
# address, by the way: ...", "write to ... instead", "my blog, https://...".
_EN_EMAIL_RULES = [
    re.compile(r"\b(?i:reach|write to|email|e-mail|mail|contact) me (?i:at|on|via)\s+(?P<val>[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)"),
    re.compile(r"\b(?i:(?:my|new|the new) e-?mail(?: address)?|e-?mail address)\b[^@.;!?]{0,40}?"
               r"(?P<val>[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)"),
    re.compile(r"\b(?i:write|send (?:it|them|things|mail|emails?)) to\s+(?P<val>[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)\s+(?i:instead|now|from now on)"),
]
_EN_SITE_RULE = re.compile(r"\b(?i:my|our)\s+(?:own\s+|new\s+|personal\s+)?(?i:site|website|blog|page|portfolio|homepage)\b"
                           r"[^.;!?]{0,40}?(?P<val>https?://[^\s,;!?]+[^\s,;!?.)])|"
                           r"\b(?i:put|posted|posting|writing) [^.;!?]{0,40}?\bonline at\s+(?P<val2>https?://[^\s,;!?]+[^\s,;!?.)])")
_EN_RELATION_RULE = re.compile(r"\b(?P<own>[Mm]y|[Oo]ur)\s+(?P<rel>" + _REL_EN + r")\s*,?\s+(?P<relname>[A-Z][a-z]+)\b")
_ATTR_TAIL = re.compile(r"\s+(?:lately|these days|now|right now|at the moment|currently|nowadays)$")


def _attribute(attr: str) -> tuple[str, str, tuple[str, str]] | None:
    """(kind, key part, labels) for an attribute name, or None when it names
    nothing the rules keep."""
    attr = _ATTR_TAIL.sub("", collapse_space(attr).lower())
    attr = re.sub(r"^(current|new|old|present|actual)\s+", "", attr)
    attr = re.sub(r"^(现在的|新的|目前的)", "", attr)
    if not attr or len(attr) > 30:
        return None
    for prefix in ("favorite ", "favourite ", "最喜欢的", "最爱的"):
        if attr.startswith(prefix):
            word = attr[len(prefix):].strip()
            found = FAVORITE_WORDS.get(word)
            if found:
                return "prefer", f"preference.{found}", ("", "")
            return "attribute", f"favorite_{slug(word)}", (f"favorite {word}", f"最喜欢的{word}")
    if attr.endswith("'s name") and attr[:-7] in RELATIONS:
        return "relation", attr[:-7], RELATIONS[attr[:-7]]
    if attr in RELATIONS:
        return "relation", attr, RELATIONS[attr]
    part = ATTRIBUTES.get(attr)
    if part is None:
        # Any other short noun ("my locker code is 4242") is an attribute too,
        # if its value passes the stricter check of `_attribute_fact`.
        if attr in NOT_ATTRIBUTES or len(attr.split()) > 3:
            return None
        return "attribute", slug(attr), (attr, attr)
    if part in {"name", "location", "employer", "occupation", "age"}:
        return part, part, ("", "")
    en, zh = ATTRIBUTE_LABELS.get(part, (attr, attr))
    return "attribute", part, (en, zh)


def _attribute_fact(attr: str, raw: str, subject: Subject, zh: bool, tail: str) -> FactMatch | None:
    """The fact "my <attr> is <raw>" states; `tail` is the sentence from the
    value on (an address runs past its commas)."""
    found = _attribute(attr)
    if found is None:
        return None
    kind, part, label = found
    if kind == "relation":
        return _relation(part, raw, subject, zh)
    if kind == "prefer":
        fact = _preference("prefer", raw, subject, zh, 0.9)
        return replace(fact, key=f"{subject.key}.{part}") if fact else None
    if part == "email":
        literal = _EMAIL_RE.search(raw)
        value = literal.group(0) if literal else None
    elif part == "phone":
        literal = _PHONE_RE.search(raw)
        value = literal.group(0).strip() if literal else None
    elif part == "name":
        value = raw.strip() if zh else _name_value(raw.strip())
    elif part == "address":
        tail = re.split(r"[，。！？；]", tail)[0] if zh else re.sub(r"[.!?]+$", "", tail.strip())
        value = _clean_value(tail, zh, keep_and=True, keep_article=True)
        if not zh and not re.search(r"\d", value):
            return None  # "my place is a mess" is no address
    else:
        value = _clean_value(raw, zh, keep_time=True, keep_article=kind == "attribute")
        if part in {"budget", "age", "birthday", "deadline"} and not re.search(r"\d|[一二三四五六七八九十百千万]", value):
            return None
        if part not in ATTRIBUTE_IMPORTANCE and part not in ATTRIBUTE_LABELS and not _plain_value(value, zh):
            return None
    if not value or not _value_ok(value, zh):
        return None
    importance = ATTRIBUTE_IMPORTANCE.get(part, 0.6)
    return _fact(kind, f"{subject.key}.{part}", value, subject, zh, importance=importance, confidence=0.9, label=label)


def _plain_value(value: str, zh: bool) -> bool:
    """A value of an attribute the rules do not know: a short thing, not a
    clause ("4242", "a red Vespa"; not "that it will rain", "going well")."""
    if zh:
        return not _ZH_NOT_OBJECT.match(value) and len(value) <= 20
    if len(value.split()) > 5 or _EN_NOT_OBJECT.match(value) or _EN_CLAUSE_VERB.search(value) \
            or re.search(r"\b\w+ing\b", value):
        return False
    # One plain word is a state ("sealed", "broken"), not a value; a number,
    # a name or a described thing ("a red Vespa") is.
    return len(value.split()) > 1 or bool(re.search(r"\d|[A-Z@/]", value))


def _relation(rel: str, raw: str, subject: Subject, zh: bool) -> FactMatch | None:
    name = raw.strip() if zh else _name_value(raw.strip())
    if not name or len(name) > 40:
        return None
    rel_en, rel_zh = RELATIONS[rel]
    single = rel in SINGLE_RELATIONS
    key = f"{subject.key}.{slug(rel_en)}" + ("" if single else f".{slug(name)}")
    return _fact("relation", key, name, subject, zh, confidence=0.85, label=(rel_en, rel_zh))


def _en_facts(sentence: str, speaker: Subject) -> list[FactMatch]:
    found: list[FactMatch] = []
    # Lowered once for every test of a word below (the cues of `_EN_RULES` too).
    folded = sentence.lower() if sentence.isascii() else sentence.translate(_ASCII_LOOKALIKES).lower()
    if speaker.speaker:
        # Each group of rules below needs a word or character that the test
        # before it looks for: a sentence without it cannot match them.
        owned = "my" in folded or "our" in folded
        for rule in _EN_NAME_RULES:
            match = rule.search(sentence)
            name = _name_value(match.group("val")) if match else None
            if name:
                found.append(_fact("name", f"{speaker.key}.name", name, speaker, False, confidence=0.9))
                break
        for rule in _EN_ATTRIBUTE_RULES if owned else ():
            for match in rule.finditer(sentence):
                fact = _attribute_fact(match.group("attr"), match.group("val"), speaker, False,
                                      sentence[match.start("val"):])
                if fact:
                    found.append(fact)
        for rule in _EN_EMAIL_RULES if "@" in sentence else ():
            match = rule.search(sentence)
            if match:
                found.append(_fact("attribute", f"{speaker.key}.email", match.group("val"), speaker, False,
                                   importance=0.85, confidence=0.85, label=("email", "邮箱")))
                break
        site = _EN_SITE_RULE.search(sentence) if "http" in sentence else None
        if site:
            found.append(_fact("attribute", f"{speaker.key}.website", site.group("val") or site.group("val2"), speaker,
                               False, importance=0.7, confidence=0.85, label=("website", "网站")))
        for match in _EN_RELATION_RULE.finditer(sentence) if owned else ():
            if match.group("relname") not in NOT_NAMES:
                fact = _relation(match.group("rel").lower(), match.group("relname"), speaker, False)
                if fact:
                    found.append(fact)
    # Which cues the sentence holds, tested once for all the rules (each
    # rule's own `any` over its cues cost about twice as much).
    present = {cue for cue in _EN_CUES if cue in folded}
    for kind, cues, rule in _EN_RULES:
        if cues and present.isdisjoint(cues):
            continue
        for match in rule.finditer(sentence):
            subject = _subject(match, sentence, speaker, False)
            if subject is None or (kind == "prefer" and not subject.speaker):
                continue
            fact = _en_predicate(kind, match, subject)
            if fact:
                found.append(fact)
    return found


def _en_predicate(kind: str, match: re.Match, subject: Subject) -> FactMatch | None:
    groups = match.groupdict()
    raw = groups["val"]
    negated = bool(groups.get("neg"))
    if kind == "allergy":
        value = _clean_value(raw, False)
        if not _value_ok(value, False, max_words=4) or _EN_NOT_OBJECT.match(value):
            return None
        if negated and "longer" not in groups["neg"]:
            return None  # "not allergic to X" states no allergy worth keeping
        return _fact("not_allergic" if negated else "allergy", f"{subject.key}.allergy.{slug(value)}", value, subject,
                     False, confidence=0.9 if subject.speaker else 0.8)
    if kind in {"location", "moving"}:
        value = _clean_value(raw, False, keep_time=kind == "moving")
        # A place is a name: "I live in Denver", not "I'm living in fear".
        if not _value_ok(value, False, max_words=6) or not re.search(r"\b[A-Z]", value):
            return None
        part = "location" if kind == "location" else "moving_to"
        return _fact(kind, f"{subject.key}.{part}", value, subject, False, confidence=0.9 if subject.speaker else 0.8)
    if kind in {"employer", "not_employer", "occupation", "age"}:
        value = _clean_value(raw, False)
        if not _value_ok(value, False, max_words=6) or _EN_NOT_OBJECT.match(value):
            return None
        if kind != "occupation" and kind != "age" and not re.search(r"\b[A-Z0-9]", value):
            return None  # an employer has a name: "I work at Acme", not "I work at home"
        part = "employer" if kind == "not_employer" else kind
        return _fact(kind, f"{subject.key}.{part}", value, subject, False)
    if kind == "diet":
        return _fact("diet", f"{subject.key}.preference.diet", raw.lower(), subject, False, confidence=0.85)
    if kind == "negated":
        no_longer = "longer" in groups["neg"].lower()
        return _preference("no_longer" if no_longer else "dislike", raw, subject, False, 0.8)
    if kind == "like":
        verb = groups["verb"].lower()
        return _preference("prefer" if verb.startswith("prefer") else "like", raw, subject, False,
                           0.8 if subject.speaker else 0.7)
    return _preference(kind, raw, subject, False, 0.8)


# --- Chinese -------------------------------------------------------------------------

_ZV = r"(?P<val>(?:[^，。！？；,.!?;\n]|\.(?=\w)){1,40})"
_ZH_RULES: list[tuple[str, re.Pattern]] = [
    ("name", re.compile(r"我叫(?P<val>[\u4e00-\u9fffA-Za-z]{1,10}?)(?=[，。！？,.!?\s]|$)")),
    ("attr", re.compile(r"(?:把|将)?我的(?P<attr>[\u4e00-\u9fffA-Za-z]{1,10}?)(?:改成了?|改为|换成了?|更新为|更新成|变成了?|现在是|是|为)" + _ZV)),
    ("attr", re.compile(r"(?:把|将)(?P<attr>邮箱|电话|手机号|地址|住址|生日|名字|预算)(?:改成了?|改为|换成了?|更新为)" + _ZV)),
    ("location", re.compile(_SUBJ_ZH + r"(?:现在|目前|已经)?(?:住在|住)" + _ZV)),
    ("location", re.compile(_SUBJ_ZH + r"[^，。！？；,.!?\s]{0,6}?搬(?:到|去)了?" + _ZV)),
    ("occupation", re.compile(r"我?在[^，。！？；,.!?\s]{1,15}?(?:做|当|担任)(?P<val>[^，。！？；,.!?\s]{2,10})")),
    ("employer", re.compile(_SUBJ_ZH + r"(?:现在|目前)?在(?P<val>[^，。！？；,.!?\s]{1,20}?)(?:工作|上班)")),
    ("occupation", re.compile(_SUBJ_ZH + r"是(?:一名|一个|一位|个)(?P<val>[^，。！？；,.!?\s]{1,10})")),
    ("age", re.compile(_SUBJ_ZH + r"今年(?P<val>\d{1,3})岁")),
    ("allergy", re.compile(_SUBJ_ZH + r"(?:也|还|一直)?对(?P<val>[^，。！？；,.!?\s]{1,10})过敏")),
    ("no_longer", re.compile(_SUBJ_ZH + r"(?:现在|最近|其实|也|都)?(?:不再喜欢|不再喝|不再吃|不喝|不吃)" + _ZV)),
    ("dislike", re.compile(_SUBJ_ZH + r"(?:现在|最近|其实|也|都)?(?:不喜欢|不爱|讨厌|不想要)" + _ZV)),
    ("prefer", re.compile(_SUBJ_ZH + r"(?:现在|最近|还是|更|比较|特别|非常|很|最|也|一直|其实|都)*(?:喜欢|爱|偏好|偏爱|习惯)" + _ZV)),
    ("prefer", re.compile(r"(?:改|换)成?(?P<val>(?:喝|吃|用|听)[^，。！？；,.!?\s]{1,12})")),
    ("prefer", re.compile(r"我(?:现在|目前)?(?:只喝|只吃|只用|平时喝|平时吃|每天喝)" + _ZV)),
    ("vegetarian", re.compile(r"我(?:现在)?吃素")),
    ("relation", re.compile(r"我的?(?P<rel>" + _REL_ZH + r")(?:叫|是)(?P<val>[\u4e00-\u9fffA-Za-z]{1,8}?)(?=[，。！？,.!?\s]|$)")),
]


def _zh_facts(sentence: str, speaker: Subject) -> list[FactMatch]:
    found: list[FactMatch] = []
    for kind, pattern in _ZH_RULES:
        for match in pattern.finditer(sentence):
            groups = match.groupdict()
            subject = _subject(match, sentence, speaker, True) if "self" in groups else speaker
            if subject is None:
                continue
            fact: FactMatch | None
            if kind == "vegetarian":
                fact = _fact("diet", f"{subject.key}.preference.diet", "素食", subject, True, confidence=0.85)
            elif kind == "attr":
                fact = _attribute_fact(groups["attr"], groups["val"], subject, True, sentence[match.start("val"):])
            elif kind == "relation":
                fact = _relation(groups["rel"], groups["val"], subject, True)
            elif kind in {"prefer", "dislike", "no_longer"}:
                fact = _preference(kind, groups["val"], subject, True, 0.8)
            elif kind == "allergy":
                value = _clean_value(groups["val"], True)
                fact = _fact("allergy", f"{subject.key}.allergy.{slug(value)}", value, subject, True,
                             confidence=0.9) if value else None
            else:
                value = _clean_value(groups["val"], True)
                if kind in {"occupation", "employer"}:
                    value = _ZH_REMARK.sub("", value)
                if not _value_ok(value, True) or len(value) < 2:
                    continue
                fact = _fact(kind, f"{subject.key}.{kind}", value, subject, True, confidence=0.9)
            if fact is not None:
                found.append(fact)
    return found


# --- Corrections ------------------------------------------------------------------------

_EN_CORRECTION = re.compile(r"\b(changed my mind|change of plans?|on second thought|instead|rather than|"
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
                hit = word in lowered and _category_word_re(word).search(lowered)
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
    return _fact("prefer", f"{speaker.key}.preference.{name}", value, speaker, zh, confidence=0.75)


def match_facts(sentence: str, speaker: Subject = USER) -> list[FactMatch]:
    """Facts one sentence of `speaker` states: about the speaker, about people
    they name by relation or by name. One fact per key."""
    zh = detect_language(sentence) == "zh"
    found = _zh_facts(sentence, speaker) if zh else _en_facts(sentence, speaker)
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
