"""Rule-based recognizers for the offline extractor, English and Chinese.

Each recognizer reads one sentence of one message and returns what it states:
a fact (a normalized key and a value), an open task, or a closure. Keys are
canonical across both languages ("我的邮箱" and "my email" are both
`user.email`) so that a later value of the same key replaces the earlier one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memories.extraction.text import detect_language, normalize_space, terms

_ZH_STOP = r"[，。！？；,.!?;\n]"
_EN_STOP = r"[,.;!?\n]"


@dataclass(frozen=True)
class FactMatch:
    key: str
    value: str
    content: str
    importance: float
    confidence: float


# Attribute names (after "my ..." / "我的...") -> canonical key.
_ATTRIBUTES = {
    "name": "name", "full name": "name", "名字": "name", "姓名": "name",
    "email": "email", "email address": "email", "e-mail": "email", "邮箱": "email", "电子邮箱": "email", "邮件地址": "email",
    "phone": "phone", "phone number": "phone", "mobile": "phone", "cell": "phone", "number": "phone",
    "电话": "phone", "手机": "phone", "手机号": "phone", "电话号码": "phone", "手机号码": "phone",
    "address": "address", "home address": "address", "地址": "address", "住址": "address", "家庭住址": "address",
    "birthday": "birthday", "birth date": "birthday", "date of birth": "birthday", "生日": "birthday",
    "city": "location", "hometown": "hometown", "家乡": "hometown", "老家": "hometown", "城市": "location",
    "job": "occupation", "occupation": "occupation", "profession": "occupation", "role": "occupation", "职业": "occupation",
    "company": "employer", "employer": "employer", "公司": "employer", "单位": "employer",
    "timezone": "timezone", "time zone": "timezone", "时区": "timezone",
    "age": "age", "年龄": "age",
    "budget": "budget", "预算": "budget",
    "deadline": "deadline", "截止日期": "deadline",
    "wife": "spouse", "husband": "spouse", "partner": "spouse", "老婆": "spouse", "老公": "spouse", "妻子": "spouse", "丈夫": "spouse",
}
# Attributes that are opinions or chatter, not facts about the user.
_NOT_ATTRIBUTES = {
    "question", "problem", "issue", "point", "guess", "bad", "pleasure", "fault", "mistake", "apologies",
    "understanding", "thought", "thoughts", "opinion", "answer", "code", "test", "turn", "concern", "idea",
    "问题", "意思", "想法", "看法", "错", "代码",
}

# Preference objects -> category, so that "I prefer tea" and "我现在改喝咖啡了"
# land on the same key (user.preference.drink).
_CATEGORIES: dict[str, tuple[str, ...]] = {
    "drink": ("coffee", "tea", "green tea", "black tea", "latte", "espresso", "cappuccino", "americano", "juice",
              "water", "milk", "beer", "wine", "cola", "soda", "咖啡", "茶", "绿茶", "红茶", "奶茶", "果汁", "牛奶",
              "啤酒", "红酒", "可乐", "拿铁", "美式", "乌龙", "豆浆"),
    "diet": ("vegetarian", "vegan", "gluten-free", "keto", "halal", "kosher", "素食", "吃素", "清真", "低碳水"),
    "food": ("pizza", "sushi", "noodles", "ramen", "rice", "pasta", "burger", "salad", "steak", "dumplings",
             "hot pot", "spicy food", "seafood", "chocolate", "火锅", "面条", "米饭", "饺子", "寿司", "披萨", "汉堡",
             "沙拉", "牛排", "川菜", "粤菜", "湘菜", "辣", "海鲜", "巧克力", "包子"),
    "color": ("red", "blue", "green", "yellow", "black", "white", "purple", "orange", "pink", "grey", "gray",
              "红色", "蓝色", "绿色", "黄色", "黑色", "白色", "紫色", "橙色", "粉色", "灰色"),
    "programming_language": ("python", "rust", "golang", "java", "javascript", "typescript", "c++", "kotlin",
                             "swift", "ruby", "php", "haskell", "scala", "elixir"),
    "editor": ("vim", "neovim", "emacs", "vs code", "vscode", "pycharm", "intellij", "sublime", "cursor"),
    "os": ("linux", "macos", "windows", "ubuntu", "debian", "arch"),
    "reply_style": ("short answers", "short replies", "concise", "brief", "detailed", "bullet points", "examples",
                    "简洁", "简短", "详细", "要点", "列表", "分点", "举例"),
    "language": ("english", "chinese", "mandarin", "cantonese", "japanese", "french", "german", "spanish",
                 "中文", "英文", "英语", "汉语", "普通话", "粤语", "日语"),
    "seat": ("window seat", "aisle seat", "靠窗", "过道"),
    "transport": ("train", "trains", "flying", "flights", "driving", "bike", "cycling", "subway", "高铁", "火车",
                  "飞机", "开车", "地铁", "骑车"),
    "music": ("jazz", "rock", "classical", "pop music", "hip hop", "blues", "爵士", "摇滚", "古典", "流行音乐", "民谣"),
    "sport": ("running", "swimming", "tennis", "basketball", "football", "soccer", "yoga", "hiking", "climbing",
              "badminton", "跑步", "游泳", "网球", "篮球", "足球", "瑜伽", "爬山", "徒步", "羽毛球", "攀岩"),
    "pet": ("cats", "dogs", "猫", "狗"),
    "meeting_time": ("morning meetings", "afternoon meetings", "mornings", "afternoons", "evenings",
                     "上午开会", "下午开会", "上午", "下午", "晚上"),
}
# "my favorite <word>" / "最喜欢的<word>" -> category.
_FAVORITE_WORDS = {
    "drink": "drink", "beverage": "drink", "food": "food", "dish": "food", "color": "color", "colour": "color",
    "language": "language", "programming language": "programming_language", "editor": "editor",
    "music": "music", "sport": "sport", "饮料": "drink", "食物": "food", "菜": "food", "颜色": "color",
    "语言": "language", "编程语言": "programming_language", "编辑器": "editor", "音乐": "music", "运动": "sport",
}
_ZH_VERB_PREFIX = re.compile(r"^(喝|吃|用|听|看|玩|去|坐|住|穿)")
_EN_TRAILING = re.compile(r"\s+(now|these days|nowadays|instead|anymore|any more|more|a lot|too|as well|best|most|better|over .*|rather than .*|than .*)$", re.I)
_EN_CLAUSE_BREAK = re.compile(r"\s+(?:and|but|so|because|which|who|since|while|though|although|as|when|where|if|for)\s+", re.I)
_EN_TIME_TAIL = re.compile(r"\s+(?:last|this|next)\s+(?:week|month|year|weekend)$|\s+(?:yesterday|today|recently|lately)$|\s+(?:for|since)\s+\S+(?:\s+\S+)?$", re.I)
_ZH_TRAILING = re.compile(r"(了|啦|呢|吧|哦|呀|的|现在|一点|多了|更多|而不是.*|不是.*)$")


def _slug(text: str) -> str:
    text = normalize_space(text).lower()
    text = re.sub(r"[^\w\u4e00-\u9fff]+", "_", text)
    return text.strip("_")[:60]


def _category(value: str) -> str | None:
    lowered = value.lower()
    best: tuple[int, str] | None = None
    for category, words in _CATEGORIES.items():
        for word in words:
            ascii_word = word.isascii()
            hit = re.search(rf"(?<![a-z]){re.escape(word)}(?![a-z])", lowered) if ascii_word else word in value
            if hit and (best is None or len(word) > best[0]):
                best = (len(word), category)
    return best[1] if best else None


def _clean_value(value: str, zh: bool) -> str:
    value = normalize_space(value).strip(" \"'“”‘’「」:：")
    for _ in range(2):
        value = (_ZH_TRAILING if zh else _EN_TRAILING).sub("", value).strip()
    if zh:
        value = _ZH_VERB_PREFIX.sub("", value)
    else:
        # One clause: "Alice and I live in Berlin" -> "Alice".
        value = _EN_CLAUSE_BREAK.split(value)[0]
        value = _EN_TIME_TAIL.sub("", value)
        value = re.sub(r"^(to|the|a|an)\s+", "", value, flags=re.I)
    return value.strip(" \"'“”‘’「」")


def _attribute_key(attr: str) -> str | None:
    attr = normalize_space(attr).lower().strip()
    attr = re.sub(r"^(current|new|old|present)\s+", "", attr)
    attr = re.sub(r"^(现在的|新的|目前的)", "", attr)
    if not attr or attr in _NOT_ATTRIBUTES or len(attr) > 30:
        return None
    for prefix in ("favorite ", "favourite ", "最喜欢的", "最爱的"):
        if attr.startswith(prefix):
            word = attr[len(prefix):].strip()
            category = _FAVORITE_WORDS.get(word)
            return f"user.preference.{category}" if category else f"user.favorite_{_slug(word)}"
    if attr in _ATTRIBUTES:
        return f"user.{_ATTRIBUTES[attr]}"
    if len(attr.split()) > 3:
        return None
    return f"user.{_slug(attr)}"


_EN_TEMPLATES = {
    "user.name": "User's name is {v}",
    "user.location": "User lives in {v}",
    "user.employer": "User works at {v}",
    "user.workplace": "User works at {v}",
    "user.occupation": "User works as {v}",
    "user.age": "User is {v} years old",
    "user.allergy": "User is allergic to {v}",
}
_ZH_TEMPLATES = {
    "user.name": "用户叫{v}",
    "user.location": "用户住在{v}",
    "user.employer": "用户在{v}工作",
    "user.workplace": "用户在{v}工作",
    "user.occupation": "用户是{v}",
    "user.age": "用户今年{v}岁",
    "user.allergy": "用户对{v}过敏",
}


def render_fact(key: str, value: str, zh: bool, attr_label: str | None = None) -> str:
    templates = _ZH_TEMPLATES if zh else _EN_TEMPLATES
    if key in templates:
        return templates[key].format(v=value)
    if key == "user.preference.diet":
        return f"用户饮食：{value}" if zh else f"User's diet: {value}"
    if key.startswith("user.preference."):
        return f"用户喜欢{value}" if zh else f"User prefers {value}"
    if key.startswith("user.dislike."):
        return f"用户不喜欢{value}" if zh else f"User dislikes {value}"
    label = attr_label or key.removeprefix("user.").replace("_", " ")
    return f"用户的{label}是{value}" if zh else f"User's {label} is {value}"


def _fact(key: str, value: str, zh: bool, importance: float, confidence: float, label: str | None = None) -> FactMatch | None:
    value = _clean_value(value, zh)
    if not value or len(value) > 80 or (not zh and len(value.split()) > 8):
        return None
    return FactMatch(key=key, value=value, content=render_fact(key, value, zh, label), importance=importance, confidence=confidence)


def _preference(value: str, zh: bool, negative: bool, confidence: float) -> FactMatch | None:
    cleaned = _clean_value(value, zh)
    if not cleaned:
        return None
    lowered = cleaned.lower()
    # "I like your idea", "I'd like to know ...": opinions and requests, not preferences.
    if not zh and re.match(r"^(your|that|this|it|these|those|him|her|them|you|what|how|when|where|know|ask|see)\b", lowered):
        return None
    if zh and re.match(r"^(你|这|那|它|他|她|知道|问)", cleaned):
        return None
    category = _category(cleaned)
    if category is None:
        head = terms(cleaned)
        if not head:
            return None
        category = _slug(head[0])
    kind = "dislike" if negative else "preference"
    return _fact(f"user.{kind}.{category}", cleaned, zh, 0.7, confidence)


# A value runs to the end of its clause; a dot inside a token (an e-mail, a
# domain, a decimal) does not end it.
_V = r"(?P<val>(?:[^,.;!?\n]|\.(?=\w))+)"
_ZV = r"(?P<val>(?:[^，。！？；,.!?;\n]|\.(?=\w)){1,40})"

_EN_RULES: list[tuple[re.Pattern, str]] = [
    (re.compile(r"\b(?i:my name is|i'm called|i am called|call me)\s+(?P<val>[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*)?)"), "name"),
    (re.compile(r"\b(?:please\s+)?(?:change|update|set|switch)\s+my\s+(?P<attr>[a-z][a-z' \-]{1,40}?)\s+to\s+" + _V, re.I), "attr"),
    (re.compile(r"\bmy\s+(?P<attr>[a-z][a-z' \-]{1,40}?)\s+(?:is now|has changed to|changed to|is|are)\s+" + _V, re.I), "attr"),
    (re.compile(r"\bi\s+(?:now\s+|currently\s+|still\s+)?(?:live|am living|reside)\s+in\s+" + _V, re.I), "location"),
    (re.compile(r"\bi'm\s+(?:now\s+|currently\s+)?(?:living|based)\s+in\s+" + _V, re.I), "location"),
    (re.compile(r"\bi\s+am\s+(?:now\s+|currently\s+)?based\s+in\s+" + _V, re.I), "location"),
    (re.compile(r"\bi(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+)?moved\s+to\s+" + _V, re.I), "location"),
    (re.compile(r"\bi\s+(?:now\s+|currently\s+)?work\s+(?:at|for)\s+" + _V, re.I), "employer"),
    (re.compile(r"\bi(?:'m| am)\s+(?:now\s+)?(?:an?\s+)(?P<val>(?:[a-z\-]+\s+)?(?:engineer|developer|designer|teacher|doctor|nurse|student|manager|lawyer|writer|scientist|researcher|accountant|consultant|analyst|artist|chef|programmer|architect|founder|photographer))\b", re.I), "occupation"),
    (re.compile(r"\bi(?:'m| am)\s+(?P<val>\d{1,3})\s+(?:years old|yo)\b", re.I), "age"),
    (re.compile(r"\bi(?:'m| am)\s+allergic\s+to\s+" + _V, re.I), "allergy"),
    (re.compile(r"\bi\s+(?:really\s+|now\s+|still\s+|actually\s+|much\s+|mostly\s+|usually\s+|also\s+|do\s+)*(?:don't|do not|no longer)\s+(?:like|enjoy|want)\s+" + _V, re.I), "dislike"),
    (re.compile(r"\bi\s+(?:really\s+)?(?:hate|dislike|can't stand|cannot stand)\s+" + _V, re.I), "dislike"),
    (re.compile(r"\bi\s+(?:really\s+|now\s+|still\s+|actually\s+|much\s+|mostly\s+|usually\s+|also\s+|definitely\s+)*(?:prefer|like|love|enjoy|adore)\s+" + _V, re.I), "preference"),
    (re.compile(r"\bi(?:'d| would)\s+rather\s+(?:have\s+|use\s+|drink\s+|eat\s+)?" + _V, re.I), "preference"),
    (re.compile(r"\bi(?:'ve| have)\s+switched\s+to\s+" + _V, re.I), "preference"),
    (re.compile(r"\bi(?:'m| am)\s+(?:a\s+)?(?P<val>vegetarian|vegan|gluten-free|keto)\b", re.I), "preference"),
]
_ZH_RULES: list[tuple[re.Pattern, str]] = [
    (re.compile(r"我叫(?P<val>[\u4e00-\u9fffA-Za-z]{1,10}?)(?=[，。！？,.!?\s]|$)"), "name"),
    (re.compile(r"(?:把|将)?我的(?P<attr>[\u4e00-\u9fffA-Za-z]{1,10}?)(?:改成了?|改为|换成了?|更新为|更新成|变成了?|现在是|是|为)" + _ZV), "attr"),
    (re.compile(r"(?:把|将)(?P<attr>邮箱|电话|手机号|地址|住址|生日|名字)(?:改成了?|改为|换成了?|更新为)" + _ZV), "attr"),
    (re.compile(r"我(?:现在|目前|已经)?(?:住在|住)" + _ZV), "location"),
    (re.compile(r"我[^，。！？；,.!?\s]{0,6}?搬(?:到|去)了?" + _ZV), "location"),
    (re.compile(r"我?在[^，。！？；,.!?\s]{1,15}?(?:做|当|担任)(?P<val>[^，。！？；,.!?\s]{2,10})"), "occupation"),
    (re.compile(r"我(?:现在|目前)?在(?P<val>[^，。！？；,.!?\s]{1,20}?)(?:工作|上班)"), "employer"),
    (re.compile(r"我是(?:一名|一个|一位|个)(?P<val>[^，。！？；,.!?\s]{1,10})"), "occupation"),
    (re.compile(r"我今年(?P<val>\d{1,3})岁"), "age"),
    (re.compile(r"我对(?P<val>[^，。！？；,.!?\s]{1,10})过敏"), "allergy"),
    (re.compile(r"我(?:现在|最近|其实|也|都)?(?:不喜欢|不爱|讨厌|不想要|不再喜欢)" + _ZV), "dislike"),
    (re.compile(r"我(?:现在|最近|还是|更|比较|特别|非常|很|最|也|一直|其实|都)*(?:喜欢|爱|偏好|偏爱|习惯)" + _ZV), "preference"),
    (re.compile(r"(?:改|换)成?(?P<val>(?:喝|吃|用|听)[^，。！？；,.!?\s]{1,12})"), "preference"),
    (re.compile(r"我(?:现在|目前)?(?:只喝|只吃|只用|平时喝|平时吃|每天喝)" + _ZV), "preference"),
    (re.compile(r"我(?:现在)?吃素"), "vegetarian"),
]


def match_facts(sentence: str) -> list[FactMatch]:
    """Facts a user states about themselves in one sentence."""
    zh = detect_language(sentence) == "zh"
    found: list[FactMatch] = []
    seen_keys: set[str] = set()
    for pattern, kind in _ZH_RULES if zh else _EN_RULES:
        for match in pattern.finditer(sentence):
            fact: FactMatch | None
            if kind == "vegetarian":
                fact = _fact("user.preference.diet", "素食", True, 0.8, 0.85)
            elif kind == "attr":
                attr = match.group("attr")
                key = _attribute_key(attr)
                if key is None:
                    continue
                if key.startswith("user.preference."):
                    fact = _fact(key, match.group("val"), zh, 0.7, 0.9)
                else:
                    label = None if key.removeprefix("user.") in set(_ATTRIBUTES.values()) and not zh else attr
                    fact = _fact(key, match.group("val"), zh, 0.75, 0.9, label)
            elif kind in {"preference", "dislike"}:
                fact = _preference(match.group("val"), zh, kind == "dislike", 0.8)
            else:
                importance = {"name": 0.85, "location": 0.8, "employer": 0.75, "occupation": 0.75, "age": 0.6, "allergy": 0.9}[kind]
                fact = _fact(f"user.{kind}", match.group("val"), zh, importance, 0.9)
            if fact is not None and fact.key not in seen_keys:
                seen_keys.add(fact.key)
                found.append(fact)
    return found


_EN_TASK = re.compile(
    r"(?:\b(?:please\s+)?remind me (?:to|about|that)\s+|\bdon't let me forget (?:to\s+)?|\bi (?:still |also |really |just )?need to\s+|\bi (?:also |still )?have to\s+|\bi must\s+|"
    r"\bi've got to\s+|\bi gotta\s+|\btodo:?\s+|\bto-do:?\s+|\baction item:?\s+|\bnext step:?\s+|"
    r"\b(?:can|could) you (?:please\s+)?(?:remind me to|help me)\s+|\bplease (?:help me|make sure to)\s+|\bfollow up (?:on|with)\s+)"
    r"(?P<task>[^.!?\n]+)",
    re.I,
)
_EN_NOT_TASK = re.compile(r"^(know|understand|ask|say|tell you|think|check if|be sure|see|explain|figure out what)\b", re.I)
_ZH_TASK = re.compile(
    r"(?:请提醒我|提醒我|记得|别忘了|不要忘了|不要忘记|帮我记一下|请帮我|帮我|(?<!不)需要|我得|待办[:：]?|TODO[:：]?)"
    r"(?P<task>[^。！？!?\n]{2,60})"
)
_ZH_NOT_TASK = re.compile(r"^(一下|看看|想想|知道|解释|问问)")


def match_task(sentence: str) -> str | None:
    """The task a sentence opens, if it opens one."""
    zh = detect_language(sentence) == "zh"
    match = (_ZH_TASK if zh else _EN_TASK).search(sentence)
    if not match:
        return None
    task = normalize_space(match.group("task")).strip(" ，,.;；:：")
    if len(task) < 2 or (_ZH_NOT_TASK if zh else _EN_NOT_TASK).match(task):
        return None
    if not zh and len(task.split()) < 2:
        return None
    return task[:200]


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
