"""The Chinese recognizers."""

from __future__ import annotations

import re
from dataclasses import replace

from memories.extraction.patterns.english import attribute_fact, relation
from memories.extraction.patterns.values import (
    REL_ZH,
    SUBJ_ZH,
    ZH_REMARK,
    FactMatch,
    Subject,
    clean_value,
    match_subject,
    new_fact,
    preference,
    slug,
    value_ok,
)

_ZV = r"(?P<val>(?:[^，。！？；,.!?;\n]|\.(?=\w)){1,40})"
_ZH_RULES: list[tuple[str, re.Pattern]] = [
    ("name", re.compile(r"我叫(?P<val>[\u4e00-\u9fffA-Za-z]{1,10}?)(?=[，。！？,.!?\s]|$)")),
    ("attr", re.compile(r"(?:把|将)?我们?的(?P<attr>[\u4e00-\u9fffA-Za-z]{1,10}?)(?:改成了?|改为|换成了?|更新为|更新成|变成了?|现在是|是|为)" + _ZV)),
    ("attr", re.compile(r"(?:把|将)(?P<attr>邮箱|电话|手机号|地址|住址|生日|名字|预算)(?:改成了?|改为|换成了?|更新为)" + _ZV)),
    ("location", re.compile(SUBJ_ZH + r"(?:现在|目前|已经)?(?:住在|住)" + _ZV)),
    ("location", re.compile(SUBJ_ZH + r"[^，。！？；,.!?\s]{0,6}?搬(?:到|去)了?" + _ZV)),
    ("occupation", re.compile(r"我?在[^，。！？；,.!?\s]{1,15}?(?:做|当|担任)(?P<val>[^，。！？；,.!?\s]{2,10})")),
    ("employer", re.compile(SUBJ_ZH + r"(?:现在|目前)?在(?P<val>[^，。！？；,.!?\s]{1,20}?)(?:工作|上班)")),
    ("occupation", re.compile(SUBJ_ZH + r"是(?:一名|一个|一位|个)(?P<val>[^，。！？；,.!?\s]{1,10})")),
    ("destination", re.compile(r"我们?(?:要|打算|准备|计划|将)?去(?P<val>[\u4e00-\u9fff]{2,5}?)(?:旅游|旅行|玩|度假)?"
                               r"(?=[，。！？,\s]|$)(?P<when>[^。！？]*)")),
    ("age", re.compile(SUBJ_ZH + r"今年(?P<val>\d{1,3})岁")),
    ("allergy", re.compile(SUBJ_ZH + r"(?:也|还|一直)?对(?P<val>[^，。！？；,.!?\s]{1,10})过敏")),
    ("no_longer", re.compile(SUBJ_ZH + r"(?:现在|最近|其实|也|都)?(?:不再喜欢|不再喝|不再吃|不喝|不吃)" + _ZV)),
    ("dislike", re.compile(SUBJ_ZH + r"(?:现在|最近|其实|也|都)?(?:不喜欢|不爱|讨厌|不想要)" + _ZV)),
    ("prefer", re.compile(SUBJ_ZH + r"(?:现在|最近|还是|更|比较|特别|非常|很|最|也|一直|其实|都)*(?:喜欢|爱|偏好|偏爱|习惯)" + _ZV)),
    ("prefer", re.compile(r"(?:改|换)成?(?P<val>(?:喝|吃|用|听)[^，。！？；,.!?\s]{1,12})")),
    ("prefer", re.compile(r"我(?:现在|目前)?(?:只喝|只吃|只用|平时喝|平时吃|每天喝)" + _ZV)),
    ("vegetarian", re.compile(r"我(?:现在)?吃素")),
    ("relation", re.compile(r"我的?(?P<rel>" + REL_ZH + r")(?:叫|是)(?P<val>[\u4e00-\u9fffA-Za-z]{1,8}?)(?=[，。！？,.!?\s]|$)")),
]


# "航空公司我喜欢国航", "酒店我喜欢民宿": the topic before the preference keys it.
_ZH_TOPICS = {"航空公司": "airline", "航司": "airline", "酒店": "hotel", "住宿": "hotel", "座位": "seat"}
_ZH_TOPIC = re.compile(r"^(?:还有[，,]?|另外[，,]?)?(" + "|".join(_ZH_TOPICS) + r")")
_ZH_DATES = re.compile(r"(?P<start>\d{1,2}月\d{1,2}[日号])\s*(?:到|至|-|—|~)\s*(?P<end>(?:\d{1,2}月)?\d{1,2}[日号])"
                       r"|(?P<month>\d{1,2}月(?:\d{1,2}[日号])?|[一二三四五六七八九十]{1,2}月)")


def _zh_trip(place: str, when: str, subject: Subject) -> list[FactMatch]:
    if not subject.speaker or len(place) < 2:
        return []
    found = [new_fact("destination", f"{subject.key}.trip.destination", place, subject, True, confidence=0.85)]
    dates = _ZH_DATES.search(when or "")
    if dates:
        value = f"{dates['start']}到{dates['end']}" if dates["start"] else dates["month"]
        found.append(new_fact("trip_dates", f"{subject.key}.trip.dates", value, subject, True, confidence=0.85))
    return found


def zh_facts(sentence: str, speaker: Subject) -> list[FactMatch]:
    found: list[FactMatch] = []
    for kind, pattern in _ZH_RULES:
        for match in pattern.finditer(sentence):
            groups = match.groupdict()
            subject = match_subject(match, sentence, speaker, True) if "self" in groups else speaker
            if subject is None:
                continue
            fact: FactMatch | None
            if kind == "vegetarian":
                fact = new_fact("diet", f"{subject.key}.preference.diet", "素食", subject, True, confidence=0.85)
            elif kind == "attr":
                fact = attribute_fact(groups["attr"], groups["val"], subject, True, sentence[match.start("val"):])
            elif kind == "relation":
                fact = relation(groups["rel"], groups["val"], subject, True)
            elif kind in {"prefer", "dislike", "no_longer"}:
                fact = preference(kind, groups["val"], subject, True, 0.8)
                topic = _ZH_TOPIC.match(sentence)
                if fact is not None and topic and kind == "prefer" and not fact.key.endswith(_ZH_TOPICS[topic[1]]):
                    fact = replace(fact, key=f"{subject.key}.preference.{_ZH_TOPICS[topic[1]]}")
            elif kind == "destination":
                found.extend(_zh_trip(groups["val"], groups["when"], subject))
                continue
            elif kind == "allergy":
                value = clean_value(groups["val"], True)
                fact = new_fact("allergy", f"{subject.key}.allergy.{slug(value)}", value, subject, True,
                             confidence=0.9) if value else None
            else:
                value = clean_value(groups["val"], True)
                if kind in {"occupation", "employer"}:
                    value = ZH_REMARK.sub("", value)
                if not value_ok(value, True) or len(value) < 2:
                    continue
                fact = new_fact(kind, f"{subject.key}.{kind}", value, subject, True, confidence=0.9)
            if fact is not None:
                found.append(fact)
    return found
