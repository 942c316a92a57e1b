"""Open tasks and closures, English and Chinese.

A task is what someone asks to be reminded of or says still has to be done,
and a request with a deadline ("please book the hotel by Friday"): a request
without one is usually answered in the next turn and is not an open loop.
"""

from __future__ import annotations

import re

from memories.extraction.text import collapse_space, detect_language, terms

_WEEKDAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_MONTHS = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
# When something is due: "by Friday", "before June 3", "until the 12th",
# "tomorrow", "next week", "end of the month", "on 5/12".
DEADLINE_RE = re.compile(
    r"\b(?:(?:by|before|until|till|no later than|due|on|this|next)\s+(?:the\s+)?(?:end of\s+(?:the\s+)?)?"
    r"(?:" + _WEEKDAYS + r"|" + _MONTHS + r"\b(?:\s+\d{1,2}(?:st|nd|rd|th)?)?|\d{1,2}(?:st|nd|rd|th)\b|\d{1,2}[/.-]\d{1,2}"
    r"|\d{1,2}(?::\d{2})?\s*(?:am|pm)|noon|midnight|tonight|tomorrow|today|week(?:end)?|month|year|quarter|day)"
    r"|tomorrow|tonight|end of (?:the )?(?:day|week|month|year)|asap|as soon as possible|eod|eow)\b",
    re.I,
)
_ZH_DEADLINE_RE = re.compile(
    r"(之前|以前|(?<=[\d日号天周末底点一二三四五六七八九十])前|截止|到期|明天|今晚|后天|下周|本周|这周|月底|周[一二三四五六日天]|星期[一二三四五六日天]|\d{1,2}[月号日])"
)

_EN_TASK = re.compile(
    r"(?:\b(?:please\s+)?remind me (?:to|about|that)\s+|\bdon't let me forget[:,]?\s+(?:to\s+)?|\bi (?:still |also |really |just )?need to\s+|\bi (?:also |still )?have to\s+|\bi must\s+|"
    r"\bi've got to\s+|\bi gotta\s+|\btodo:?\s+|\bto-do:?\s+|\baction item:?\s+|\bnext step:?\s+|"
    r"\b(?:can|could|would) you (?:please\s+)?(?:remind me to|help me)\s+|\bplease (?:help me|make sure to)\s+|\bfollow up (?:on|with)\s+)"
    r"(?P<task>[^.!?\n]+)",
    re.I,
)
# A request ("please book ...", "can you send ...", "I need you to ...") opens
# a task only with a deadline.
_EN_REQUEST = re.compile(
    r"(?:^|[,;:]\s*|\b(?:and|so|also)\s+)(?:please\s+|pls\s+|kindly\s+|(?:can|could|would|will) you (?:please\s+)?|"
    r"i (?:need|want|would like|'d like) you to\s+|make sure (?:to|you)\s+)(?P<task>[a-z][^.!?\n]+)",
    re.I,
)
# "Oh, one more: send me the itinerary by Sunday." (an order with a date)
_EN_IMPERATIVE = re.compile(
    r"(?:^|[:;]\s*|\b(?:and|also|then)\s+)(?P<task>(?:send|book|buy|email|call|reserve|cancel|confirm|pay|renew|"
    r"submit|finish|order|file|print|share|forward|check in for)\s[^.!?\n]+)", re.I)
_EN_OTHER_TASK = re.compile(
    r"(?:^|[,;:]\s*|\b(?:and|also|but)\s+)(?P<who>[A-Z][a-z]+|(?i:my|our) [a-z]+ [A-Z][a-z]+|(?i:my|our) [a-z]+)\s+"
    r"(?:still\s+|also\s+|really\s+)?(?:needs|has|must|should|is supposed) to\s+(?P<task>[^.!?\n]+)")
_ZH_OTHER_TASK = re.compile(r"(?:^|[，,])(?P<who>[\u4e00-\u9fff]{2,3}?)(?:还|也)?(?:需要|得|要)(?P<task>[^。！？!?\n]{2,60})")
_NOT_WHO = frozenset({"It", "This", "That", "There", "Everyone", "Someone", "Nobody", "He", "She", "They", "We",
                      "You", "One", "Who", "What", "Which"})
_EN_NOT_TASK = re.compile(
    r"^(know|understand|ask|say|tell you|think|check if|be sure|see|explain|figure out what|remember that|"
    r"suggest|recommend|tell me|show me|let me know|help|give me|go|stay|eat|sleep|run|find|look up|look for|"
    r"search|compare|list|check|what|which|how|where|when|why)\b", re.I,
)
# Asked to be reminded: a task whatever its date. "记得" / "帮我" / "我得" are
# also said of things done at once ("帮我写一句...") and open a task only with
# a date in it.
_ZH_TASK = re.compile(
    r"(?:请提醒我|提醒我|别忘了|不要忘了|不要忘记|帮我记一下|帮我记着|待办[:：]?|TODO[:：]?)(?P<task>[^。！？!?\n]{2,60})"
)
_ZH_WEAK_TASK = re.compile(r"(?:记得|请帮我|帮我|(?<!不)需要|我得)(?P<task>[^。！？!?\n]{2,60})")
_ZH_FILLER_CLAUSE = re.compile(r"^(?:记着|记住|一下|一声|好的?|我|你|哦|啊)?$")
_ZH_REQUEST = re.compile(r"(?:请你?|麻烦你?|能不能|可以)(?P<task>[^。！？!?\n]{2,60})")
_ZH_NOT_TASK = re.compile(r"^(一下|看看|想想|知道|解释|问问)")


def has_deadline(text: str) -> bool:
    return bool(DEADLINE_RE.search(text) or _ZH_DEADLINE_RE.search(text))


def _clean_zh_task(task: str) -> str:
    """The clauses of a Chinese task up to its date: "，医院很难约" (a reason)
    and "，不然我肯定忘" (a remark) are not the task."""
    clauses = [c.strip() for c in re.split(r"[，,；;]", task)]
    clauses = [c for c in clauses if c]
    while clauses and _ZH_FILLER_CLAUSE.match(clauses[0]):
        clauses.pop(0)
    if not clauses:
        return ""
    end = 0
    if not _ZH_DEADLINE_RE.search(clauses[0]):
        end = next((i for i, c in enumerate(clauses) if _ZH_DEADLINE_RE.search(c)), 0)
    return "，".join(clauses[: end + 1])


def _clean_task(task: str, zh: bool) -> str | None:
    task = collapse_space(task).strip(" ，,.;；:：")
    if zh:
        task = _clean_zh_task(task)
    else:
        # "book Casa do Barao by Friday, it fills up fast": the reason after the
        # comma is not part of the task.
        head, _, rest = task.partition(", ")
        if rest and not DEADLINE_RE.search(head) and DEADLINE_RE.search(rest):
            head = task
        task = head
    if len(task) < 2 or (_ZH_NOT_TASK if zh else _EN_NOT_TASK).match(task):
        return None
    if not zh and len(task.split()) < 2:
        return None
    return task[:200]


def match_task(sentence: str) -> str | None:
    """The task a sentence opens, if it opens one."""
    zh = detect_language(sentence) == "zh"
    match = (_ZH_TASK if zh else _EN_TASK).search(sentence)
    if match:
        return _clean_task(match.group("task"), zh)
    if zh:
        weak = _ZH_WEAK_TASK.search(sentence)
        task = _clean_task(weak.group("task"), zh) if weak else None
        if task and _ZH_DEADLINE_RE.search(task):
            return task
    request = (_ZH_REQUEST if zh else _EN_REQUEST).search(sentence)
    if request and has_deadline(request.group("task")):
        return _clean_task(request.group("task"), zh)
    imperative = None if zh else _EN_IMPERATIVE.search(sentence)
    if imperative and has_deadline(imperative.group("task")):
        return _clean_task(imperative.group("task"), zh)
    return None


def match_other_task(sentence: str) -> tuple[str, str] | None:
    """(who, task) when a sentence says someone else has something to do by a
    date: "Tom needs to renew his passport before April 30"."""
    zh = detect_language(sentence) == "zh"
    match = (_ZH_OTHER_TASK if zh else _EN_OTHER_TASK).search(sentence)
    if not match or not has_deadline(match.group("task")):
        return None
    who = match.group("who")
    if (not zh and who.split()[-1] in _NOT_WHO) or (zh and who[0] in "我你咱您他她它这那"):
        return None
    task = _clean_task(match.group("task"), zh)
    return (who, task) if task else None


_EN_CLOSURE = re.compile(
    r"\b(done|finished|completed|all set|taken care of|sorted out|resolved|no longer need|don't need to|"
    r"crossed (?:it )?off|i(?:'ve| have)? (?:already |just |finally )?(?:done|finished|completed|renewed|booked|sent|paid|"
    r"submitted|bought|called|fixed|cancelled|canceled|scheduled|emailed|ordered|filed|returned|signed|picked up|handled))\b",
    re.I,
)
_ZH_CLOSURE = re.compile(
    r"(已完成|完成了|搞定了|搞定|做完了|办好了|办完了|弄好了|处理好了|解决了|已解决|提交了|订好了|买好了|交了|发了|"
    r"已经.{1,12}了|不用.{0,8}了|不需要了)"
)
_CLOSURE_WORDS = frozenset(
    {"done", "finished", "completed", "all", "set", "taken", "care", "sorted", "resolved", "already", "just", "finally",
     "it", "that", "ve", "已完成", "完成", "搞定", "做完", "办好", "弄好", "已经"}
)


def match_closure(sentence: str) -> tuple[bool, list[str]]:
    """(does this sentence report something finished, its content terms)."""
    zh = detect_language(sentence) == "zh"
    if not (_ZH_CLOSURE if zh else _EN_CLOSURE).search(sentence):
        return False, []
    if not zh and re.search(r"\b(not|haven't|hasn't|isn't|never)\b", sentence, re.I):
        return False, []
    if zh and re.search(r"(没有|还没|未完成|没搞定)", sentence):
        return False, []
    content = [t for t in terms(sentence) if t not in _CLOSURE_WORDS]
    return True, content
