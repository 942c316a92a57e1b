"""The day a task is due, from the words that say it ("by Friday", "before
June 3", "the 12th", "tomorrow", "周五之前", "1月17日前"), counted from the day
the message was written, or as an ISO day. English and Chinese; None when no
day is named.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

_WEEKDAYS_EN = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_MONTHS = {name: number for number, name in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}
_MONTH = r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_EN_MONTH_DAY = re.compile(r"\b" + _MONTH + r"\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\b", re.I)
_EN_DAY_MONTH = re.compile(r"\b(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b", re.I)
_EN_WEEKDAY = re.compile(r"\b(?P<next>next\s+)?(?P<wd>mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?\b", re.I)
_EN_ORDINAL = re.compile(r"\bthe\s+(?P<day>\d{1,2})(?:st|nd|rd|th)\b", re.I)
_EN_RELATIVE = re.compile(r"\b(?P<word>today|tonight|tomorrow|end of (?:the )?(?:week|month)|next week)\b", re.I)
_ISO_DAY = re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b")
_ZH_MONTH_DAY = re.compile(r"(?P<month>\d{1,2})月(?P<day>\d{1,2})[日号]")
_ZH_WEEKDAY = re.compile(r"(?P<next>下)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])")
_ZH_RELATIVE = re.compile(r"(?P<word>今天|今晚|明天|后天|月底|周末|下周)")


def _weekday(reference: date, weekday: int, *, next_week: bool) -> date:
    ahead = (weekday - reference.weekday()) % 7 or 7
    return reference + timedelta(days=ahead + (7 if next_week and ahead < 7 else 0))


def _month_day(reference: date, month: int, day: int) -> date | None:
    for year in (reference.year, reference.year + 1):
        try:
            found = date(year, month, day)
        except ValueError:
            return None
        if found >= reference:
            return found
    return None


def _month_end(reference: date) -> date:
    return reference.replace(day=calendar.monthrange(reference.year, reference.month)[1])


def due_date(text: str, reference: date) -> date | None:
    """The first day `text` names as a deadline, on or after `reference`
    (a day written as 2026-12-04 is taken as written)."""
    match = _ISO_DAY.search(text)
    if match:
        try:
            return date(int(match.group("year")), int(match.group("month")), int(match.group("day")))
        except ValueError:
            pass
    for pattern in (_EN_MONTH_DAY, _EN_DAY_MONTH):
        match = pattern.search(text)
        if match:
            return _month_day(reference, _MONTHS[match.group("month").lower()[:3]], int(match.group("day")))
    match = _ZH_MONTH_DAY.search(text)
    if match:
        return _month_day(reference, int(match.group("month")), int(match.group("day")))
    match = _EN_WEEKDAY.search(text)
    if match:
        return _weekday(reference, _WEEKDAYS_EN[match.group("wd").lower()[:3]], next_week=bool(match.group("next")))
    match = _ZH_WEEKDAY.search(text)
    if match:
        return _weekday(reference, _WEEKDAYS_ZH[match.group("wd")], next_week=bool(match.group("next")))
    match = _EN_ORDINAL.search(text)
    if match:
        day = int(match.group("day"))
        month_start = reference.replace(day=1)
        for first in (month_start, _month_end(reference) + timedelta(days=1)):
            found = _month_day(reference, first.month, day) if day <= 31 else None
            if found and found.month == first.month:
                return found
        return None
    match = _EN_RELATIVE.search(text) or _ZH_RELATIVE.search(text)
    if match:
        word = match.group("word").lower()
        if word in ("today", "tonight", "今天", "今晚"):
            return reference
        if word in ("tomorrow", "明天"):
            return reference + timedelta(days=1)
        if word == "后天":
            return reference + timedelta(days=2)
        if word.endswith("month") or word == "月底":
            return _month_end(reference)
        if word.startswith("next") or word == "下周":
            return _weekday(reference, 0, next_week=False) + timedelta(days=6)
        return _weekday(reference, 6, next_week=False) if reference.weekday() != 6 else reference
    return None
