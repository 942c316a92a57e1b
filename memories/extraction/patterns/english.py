"""The English recognizers: subject + predicate rules, names, attributes,
e-mails, sites and relations."""

from __future__ import annotations

import re
from dataclasses import replace

from memories.extraction.patterns.values import (
    EMAIL_RE,
    EN_CLAUSE_VERB,
    EN_NOT_OBJECT,
    PHONE_RE,
    REL_EN,
    SUBJ_EN,
    ZH_NOT_OBJECT,
    FactMatch,
    Subject,
    clean_value,
    match_subject,
    name_value,
    new_fact,
    preference,
    slug,
    value_ok,
)
from memories.extraction.text import collapse_space
from memories.extraction.vocabulary import (
    ATTRIBUTE_IMPORTANCE,
    ATTRIBUTE_LABELS,
    ATTRIBUTES,
    CATEGORIES,
    FAVORITE_WORDS,
    MONTHS_EN,
    NOT_ATTRIBUTES,
    NOT_NAMES,
    OCCUPATIONS,
    RELATIONS,
    SINGLE_RELATIONS,
)

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
     r"(?:" + _ADV + r"\s+(?:work|works)|" + _BE + _ADV + r"\s+working)(?:\s+as\s+an?\s+[a-z\-]+(?:\s+[a-z\-]+)?)?"
     r"\s+(?:at|for)\s+" + _V),
    ("employer", ("start", "joined"),
     r"(?:'ve|’ve|\s+have|\s+has)?" + _ADV + r"\s+(?:started|joined|start|started working)\s+(?:at|with)\s+" + _V),
    ("not_employer", ("work",),
     _ADV + r"\s+(?:no longer|don't|do not|doesn't|does not)\s+(?:work|works)\s+(?:at|for)\s+" + _V),
    ("occupation", (), r"(?:" + _BE + r"|" + _ADV + r"\s+(?:work|works)\s+as)" + _ADV
     + r"\s+an?\s+(?P<val>(?:[a-z\-]+\s+)?(?:" + _OCC + r"))\b"),
    # "I'm going to Lisbon from May 12 to May 19", "we're planning a trip to Porto in June"
    ("destination", ("going", "travel", "flying", "heading", "trip", "visiting"),
     r"(?:" + _BE + _ADV + r"\s+(?:going|travell?ing|flying|heading|off)\s+to|" + _BE + _ADV
     + r"\s+visiting|(?:" + _BE + r"\s+)?" + _ADV + r"\s*(?:planning|taking|booked|booking|plan|take)\s+(?:a|our|my)\s+"
     r"(?:\w+\s+)?trip\s+to)\s+(?P<val>(?-i:[A-Z][\w\-]+(?:\s[A-Z][\w\-]+)?))(?P<when>[^.;!?\n]*)"),
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
_EN_RULES = [(kind, cues, re.compile(SUBJ_EN + r"(?i:" + predicate + r")")) for kind, cues, predicate in _EN_PREDICATES]
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
_EN_RELATION_RULE = re.compile(r"\b(?P<own>[Mm]y|[Oo]ur)\s+(?P<rel>" + REL_EN + r")\s*,?\s+(?P<relname>[A-Z][a-z]+)\b")
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
        # if its value passes the stricter check of `attribute_fact`.
        if attr in NOT_ATTRIBUTES or len(attr.split()) > 3:
            return None
        return "attribute", slug(attr), (attr, attr)
    if part in {"name", "location", "employer", "occupation", "age"}:
        return part, part, ("", "")
    en, zh = ATTRIBUTE_LABELS.get(part, (attr, attr))
    return "attribute", part, (en, zh)


def attribute_fact(attr: str, raw: str, subject: Subject, zh: bool, tail: str) -> FactMatch | None:
    """The fact "my <attr> is <raw>" states; `tail` is the sentence from the
    value on (an address runs past its commas)."""
    found = _attribute(attr)
    if found is None:
        return None
    kind, part, label = found
    if kind == "relation":
        return relation(part, raw, subject, zh)
    if kind == "prefer":
        fact = preference("prefer", raw, subject, zh, 0.9)
        return replace(fact, key=f"{subject.key}.{part}") if fact else None
    if part == "email":
        literal = EMAIL_RE.search(raw)
        value = literal.group(0) if literal else None
    elif part == "phone":
        literal = PHONE_RE.search(raw)
        value = literal.group(0).strip() if literal else None
    elif part == "name":
        value = raw.strip() if zh else name_value(raw.strip())
    elif part == "address":
        tail = re.split(r"[，。！？；]", tail)[0] if zh else re.sub(r"[.!?]+$", "", tail.strip())
        value = clean_value(tail, zh, keep_and=True, keep_article=True)
        if not zh and not re.search(r"\d", value):
            return None  # "my place is a mess" is no address
    else:
        value = clean_value(raw, zh, keep_time=True, keep_article=kind == "attribute")
        if part in {"budget", "age", "birthday", "deadline"} and not re.search(r"\d|[一二三四五六七八九十百千万]", value):
            return None
        if part not in ATTRIBUTE_IMPORTANCE and part not in ATTRIBUTE_LABELS and not _plain_value(value, zh):
            return None
    if not value or not value_ok(value, zh):
        return None
    importance = ATTRIBUTE_IMPORTANCE.get(part, 0.6)
    return new_fact(kind, f"{subject.key}.{part}", value, subject, zh, importance=importance, confidence=0.9, label=label)


def _plain_value(value: str, zh: bool) -> bool:
    """A value of an attribute the rules do not know: a short thing, not a
    clause ("4242", "a red Vespa"; not "that it will rain", "going well")."""
    if zh:
        return not ZH_NOT_OBJECT.match(value) and len(value) <= 20
    if len(value.split()) > 5 or EN_NOT_OBJECT.match(value) or EN_CLAUSE_VERB.search(value) \
            or re.search(r"\b\w+ing\b", value):
        return False
    # "a bit rigid", "quite far": a description of the thing, not its value.
    if re.match(r"(?:a bit|a little|kind of|sort of|quite|very|so|too|really|pretty|rather|fairly|super|"
                r"extremely|not|totally|completely|still)\b", value, re.I):
        return False
    # One plain word is a state ("sealed", "broken"), not a value; a number,
    # a name or a described thing ("a red Vespa") is.
    return len(value.split()) > 1 or bool(re.search(r"\d|[A-Z@/]", value))


def relation(rel: str, raw: str, subject: Subject, zh: bool) -> FactMatch | None:
    name = raw.strip() if zh else name_value(raw.strip())
    if not name or len(name) > 40:
        return None
    rel_en, rel_zh = RELATIONS[rel]
    single = rel in SINGLE_RELATIONS
    key = f"{subject.key}.{slug(rel_en)}" + ("" if single else f".{slug(name)}")
    return new_fact("relation", key, name, subject, zh, confidence=0.85, label=(rel_en, rel_zh))


def en_facts(sentence: str, speaker: Subject) -> list[FactMatch]:
    found: list[FactMatch] = []
    # Lowered once for every test of a word below (the cues of `_EN_RULES` too).
    folded = sentence.lower() if sentence.isascii() else sentence.translate(_ASCII_LOOKALIKES).lower()
    if speaker.speaker:
        # Each group of rules below needs a word or character that the test
        # before it looks for: a sentence without it cannot match them.
        owned = "my" in folded or "our" in folded
        for rule in _EN_NAME_RULES:
            match = rule.search(sentence)
            name = name_value(match.group("val")) if match else None
            if name:
                found.append(new_fact("name", f"{speaker.key}.name", name, speaker, False, confidence=0.9))
                break
        for rule in _EN_ATTRIBUTE_RULES if owned else ():
            for match in rule.finditer(sentence):
                fact = attribute_fact(match.group("attr"), match.group("val"), speaker, False,
                                      sentence[match.start("val"):])
                if fact:
                    found.append(fact)
        for rule in _EN_EMAIL_RULES if "@" in sentence else ():
            match = rule.search(sentence)
            if match:
                found.append(new_fact("attribute", f"{speaker.key}.email", match.group("val"), speaker, False,
                                   importance=0.85, confidence=0.85, label=("email", "邮箱")))
                break
        site = _EN_SITE_RULE.search(sentence) if "http" in sentence else None
        if site:
            found.append(new_fact("attribute", f"{speaker.key}.website", site.group("val") or site.group("val2"), speaker,
                               False, importance=0.7, confidence=0.85, label=("website", "网站")))
        for match in _EN_RELATION_RULE.finditer(sentence) if owned else ():
            if match.group("relname") not in NOT_NAMES:
                fact = relation(match.group("rel").lower(), match.group("relname"), speaker, False)
                if fact:
                    found.append(fact)
    # Which cues the sentence holds, tested once for all the rules (each
    # rule's own `any` over its cues cost about twice as much).
    present = {cue for cue in _EN_CUES if cue in folded}
    for kind, cues, rule in _EN_RULES:
        if cues and present.isdisjoint(cues):
            continue
        for match in rule.finditer(sentence):
            subject = match_subject(match, sentence, speaker, False)
            if subject is None or (kind == "prefer" and not subject.speaker):
                continue
            if kind == "destination":
                found.extend(_trip(match, subject))
                continue
            fact = _en_predicate(kind, match, subject)
            if fact and kind in {"like", "prefer"}:
                fact = _topic_preference(fact, sentence, subject)
            if fact:
                found.append(fact)
    return found


_DAY_MONTH = (r"(?:(?:" + MONTHS_EN + r")\.?\s+\d{1,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:"
              + MONTHS_EN + r"))")
_TRIP_DATES = re.compile(r"\b(?:from\s+)?(?P<start>" + _DAY_MONTH + r")\s*(?:to|until|till|through|-|–)\s*"
                         r"(?P<end>" + _DAY_MONTH + r"|\d{1,2}(?:st|nd|rd|th)?)\b"
                         r"|\b(?:in|on|for|this|next)\s+(?P<when>" + _DAY_MONTH + r"|(?:" + MONTHS_EN
                         + r")|spring|summer|autumn|fall|winter|christmas|easter)\b", re.I)


def _trip(match: re.Match, subject: Subject) -> list[FactMatch]:
    """Where the speaker is going and, said with it, when: two facts, so a
    new date does not replace the destination nor a new place the dates."""
    if not subject.speaker:
        return []
    place = match.group("val")
    if name_value(place) is None:
        return []
    found = [new_fact("destination", f"{subject.key}.trip.destination", place, subject, False, confidence=0.85)]
    dates = _TRIP_DATES.search(match.group("when") or "")
    if dates:
        if dates.group("start"):
            value = f"from {dates.group('start')} to {dates.group('end')}"
        else:
            value = ("in " if not re.match(r"\d|\w+\s+\d", dates.group("when")) else "on ") + dates.group("when")
        found.append(new_fact("trip_dates", f"{subject.key}.trip.dates", value, subject, False, confidence=0.85))
    return found


# "For hotels I prefer ...", "I prefer TAP for flights", "when it comes to airlines, ...", "flying with TAP"
_TOPIC_RE = re.compile(r"\b(?:for|with|when it comes to|as for|regarding|on)\s+(?:the\s+|my\s+|our\s+)?"
                       r"(?P<topic>[a-z]+(?:\s[a-z]+)?)\b", re.I)
_TOPICS = {"airline": "airline", "airlines": "airline", "carrier": "airline", "carriers": "airline",
           "flights": "airline", "flight": "airline", "flying": "airline",
           "hotel": "hotel", "hotels": "hotel", "accommodation": "hotel", "lodging": "hotel", "stays": "hotel",
           "seat": "seat", "seats": "seat", "seating": "seat",
           "food": "food", "dinner": "food", "meals": "food", "drinks": "drink", "music": "music"}


def _topic_preference(fact: FactMatch, sentence: str, subject: Subject) -> FactMatch:
    """A preference whose object names no category ("TAP", "small boutique
    places") takes the one its sentence names, so an airline's and a hotel's
    never share a key; "flying with TAP" is an airline."""
    prefix = f"{subject.key}.preference."
    category_now = fact.key[len(prefix):] if fact.key.startswith(prefix) else ""
    if category_now in CATEGORIES and category_now != "transport":
        return fact
    flying_with = re.match(r"(?:flying|to fly)\s+with\s+(?P<v>.+)$", fact.value, re.I)
    if flying_with:
        return replace(fact, key=f"{prefix}airline")
    for topic in _TOPIC_RE.finditer(sentence):
        words = topic.group("topic").lower().split()
        found = _TOPICS.get(words[0]) or _TOPICS.get(words[-1])
        if found and topic.group("topic").lower() not in fact.value.lower():
            return replace(fact, key=f"{prefix}{found}")
    return fact


def _en_predicate(kind: str, match: re.Match, subject: Subject) -> FactMatch | None:
    groups = match.groupdict()
    raw = groups["val"]
    negated = bool(groups.get("neg"))
    if kind == "allergy":
        value = clean_value(raw, False)
        if not value_ok(value, False, max_words=4) or EN_NOT_OBJECT.match(value):
            return None
        if negated and "longer" not in groups["neg"]:
            return None  # "not allergic to X" states no allergy worth keeping
        return new_fact("not_allergic" if negated else "allergy", f"{subject.key}.allergy.{slug(value)}", value, subject,
                     False, confidence=0.9 if subject.speaker else 0.8)
    if kind in {"location", "moving"}:
        value = clean_value(raw, False, keep_time=kind == "moving")
        # A place is a name: "I live in Denver", not "I'm living in fear".
        if not value_ok(value, False, max_words=6) or not re.search(r"\b[A-Z]", value):
            return None
        part = "location" if kind == "location" else "moving_to"
        return new_fact(kind, f"{subject.key}.{part}", value, subject, False, confidence=0.9 if subject.speaker else 0.8)
    if kind in {"employer", "not_employer", "occupation", "age"}:
        value = clean_value(raw, False)
        if not value_ok(value, False, max_words=6) or EN_NOT_OBJECT.match(value):
            return None
        if kind != "occupation" and kind != "age" and not re.search(r"\b[A-Z0-9]", value):
            return None  # an employer has a name: "I work at Acme", not "I work at home"
        part = "employer" if kind == "not_employer" else kind
        return new_fact(kind, f"{subject.key}.{part}", value, subject, False)
    if kind == "diet":
        return new_fact("diet", f"{subject.key}.preference.diet", raw.lower(), subject, False, confidence=0.85)
    if kind == "negated":
        no_longer = "longer" in groups["neg"].lower()
        return preference("no_longer" if no_longer else "dislike", raw, subject, False, 0.8)
    if kind == "like":
        verb = groups["verb"].lower()
        return preference("prefer" if verb.startswith("prefer") else "like", raw, subject, False,
                           0.8 if subject.speaker else 0.7)
    return preference(kind, raw, subject, False, 0.8)
