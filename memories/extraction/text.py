"""Text helpers shared by the offline extractor, the summarizer and relevance
scoring: language detection, chat-client prefixes, sentence splitting that
never cuts an e-mail, URL, number or code span, small-talk filters, and a
tokenization that works for English words and Chinese characters alike."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

# CJK Unified Ideographs (+ extension A and compatibility ideographs).
_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'@._\-]*|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# Words too common to say anything about relevance.
_STOPWORDS = frozenset(
    [
        "a", "an", "the", "and", "or", "but", "if", "so", "of", "to", "in", "on", "at", "for", "with", "by", "from",
        "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "i",
        "me", "my", "we", "our", "you", "your", "he", "she", "they", "them", "his", "her", "their", "what", "which",
        "who", "whom", "how", "when", "where", "why", "do", "does", "did", "done", "have", "has", "had", "can",
        "could", "will", "would", "should", "shall", "may", "might", "must", "not", "no", "yes", "just", "also",
        "about", "into", "than", "then", "there", "here", "up", "down", "out", "over", "again", "very", "too",
        "please", "let", "lets", "i'm", "i've", "i'll", "it's", "that's", "don't"
    ]
)
_ZH_STOP_CHARS = frozenset("的了是我你他她它们在和也就都而及与着吗呢吧啊呀嗯哦个这那有没不")

# --- Literals: text that must reach a summary exactly as it was written ---------

# E-mail addresses, URLs, code spans, and numbers with inner punctuation
# (3.5, $4,000, 10:30, 2023-05-08, v2.3.1, +1 617 555 0142 is several tokens
# but none of them is cut). Sentence splitting and clipping never cut inside
# one, and no rewrite touches one.
LITERAL_RE = re.compile(
    r"```.*?```"
    r"|`[^`\n]+`"
    r"|(?:https?://|www\.)[^\s<>\"'，。！？、）)\]]+[^\s<>\"'，。！？、）)\].,;:!?]"
    r"|[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"
    r"|[vV]?\d+(?:[.,:/\-]\d+)+"
    r"|\b[A-Za-z_][\w\-]*(?:\.[A-Za-z_][\w\-]*)+(?:\(\))?",
    re.S,
)


def literals(text: str) -> list[str]:
    """The e-mails, URLs, code spans and punctuated numbers of `text`."""
    return [m.group(0) for m in LITERAL_RE.finditer(text)]


# What every literal holds somewhere (a backtick, "@", "://", "www.", a digit
# punctuated against a digit, a dot before a letter). Most chat sentences hold
# none, and this test is about six times cheaper than `LITERAL_RE`'s search,
# which tries every alternative at every position.
_LITERAL_MARK_RE = re.compile(r"[`@]|://|www\.|\d[.,:/\-]\d|\.[A-Za-z_]")


def _masked(text: str) -> str:
    """`text` with every literal's characters replaced by a letter of the same
    length, so that a search for punctuation does not find theirs."""
    if _LITERAL_MARK_RE.search(text) is None:
        return text
    return LITERAL_RE.sub(lambda m: "x" * len(m.group(0)), text)


def repair_literals(text: str, source: str) -> str:
    """`text` with literals of `source` restored where a writer split them
    ("maya@example. com" -> "maya@example.com")."""
    for literal in set(literals(source)):
        if len(literal) < 4:
            continue
        pieces = re.split(r"([.@/:,\-])", literal)
        spaced = r"\s*".join(re.escape(p) for p in pieces if p)
        text = re.sub(spaced, lambda _m, lit=literal: lit, text)
    return text


# --- Chat-client prefixes ------------------------------------------------------

# A time or date as chat exports write them: "7:31 pm", "13:56",
# "2023-05-08 13:56", "1:56 pm on 8 May, 2023", "8 May 2023".
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_TIME_TEXT = (
    r"(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[ T,]+\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?)?"
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?(?:,?\s+(?:on\s+)?[\w ,./\-]{3,30}?)?"
    r"|\d{1,2}\s+" + _MONTHS + r",?\s+\d{4}(?:,?\s+\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?)?"
    r"|\d{1,2}/\d{1,2}(?:/\d{2,4})?(?:,?\s+\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?)?)"
)
# Without brackets, only a plain clock time or date can precede a speaker.
_TIME_STRICT = (
    r"(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[ T]+\d{1,2}:\d{2}(?::\d{2})?)?"
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?)"
)
_NAME = r"[^\W\d_][\w'’.\-]{0,30}(?:[ ][^\W\d_][\w'’.\-]{0,30}){0,2}"
_PREFIX_RE = re.compile(
    r"^\s*(?:"
    r"[\[(](?P<t1>" + _TIME_TEXT + r")[\])]\s*(?:(?P<s1>" + _NAME + r")\s*[:：]\s*)?"
    r"|(?P<t2>" + _TIME_STRICT + r")\s*[-–|]?\s*(?P<s2>" + _NAME + r")\s*[:：]\s*"
    r"|(?P<s3>" + _NAME + r")\s*[\[(](?P<t3>" + _TIME_TEXT + r")[\])]\s*[:：]\s*"
    r"|(?P<s4>" + _NAME + r")\s*[:：]\s*"
    r")",
    re.I,
)
# Words that end in a colon at the start of a message without naming anyone.
NOT_SPEAKERS = frozenset(
    [
        "update", "updates", "note", "notes", "edit", "ps", "p.s.", "question", "questions", "answer", "answers",
        "q", "a", "reminder", "important", "fyi", "re", "tip", "tips", "warning", "error", "errors", "step",
        "example", "examples", "summary", "context", "facts", "done", "todo", "to-do", "task", "tasks", "goal",
        "plan", "problem", "solution", "subject", "title", "name", "email", "e-mail", "phone", "address", "date",
        "time", "location", "budget", "price", "total", "status", "hint", "fix", "bug", "issue", "why", "how",
        "what", "when", "where", "who", "which", "also", "btw", "ok", "okay", "yes", "no", "user", "assistant",
        "system", "human", "ai", "bot", "tool", "result", "results", "output", "input", "noted", "update", "thanks",
        "sure", "well", "so", "and", "but", "then", "now", "today", "tomorrow", "yesterday", "morning", "evening",
        "night", "day", "first", "second", "third", "finally", "next", "later", "actually", "options", "option",
        "pros", "cons", "dear", "hi", "hello", "hey", "background", "事实", "待办", "已完成", "背景", "用户", "助手", "注意", "备注",
        "更新", "问题", "答案", "总结", "补充", "提醒", "另外", "其实", "对了", "还有", "首先", "其次", "最后", "然后", "结果", "原因", "时间", "地点",
        "地址", "电话", "邮箱"
    ]
)


def is_speaker_name(name: str) -> bool:
    """Whether `name` can be a speaker's name in a prefix or a summary label."""
    name = name.strip()
    if not name or name.lower() in NOT_SPEAKERS:
        return False
    if _CJK_RE.match(name):
        return len(name) <= 4 and all(_CJK_RE.match(c) for c in name)
    return all(word[:1].isupper() for word in name.split())


def parse_turn_prefix(text: str) -> tuple[str | None, str | None, str]:
    """(speaker, time as written, the text without them) for a message that a
    chat client wrote as "[7:31 pm] Nate: ...", "[2023-05-08 13:56] Nate: ...",
    "Nate (7:31 pm): ..." or "Nate: ...". Without a recognisable prefix:
    (None, None, text). A bare "Name:" is only a candidate: the caller decides
    whether the conversation uses such prefixes consistently."""
    match = _PREFIX_RE.match(text)
    if not match:
        return None, None, text
    time_text = match.group("t1") or match.group("t2") or match.group("t3")
    speaker = match.group("s1") or match.group("s2") or match.group("s3") or match.group("s4")
    if speaker is not None and not is_speaker_name(speaker):
        if time_text is None or match.group("s1") is None:
            return None, None, text
        speaker = None  # "[7:31 pm] Note: ..." keeps its note; the time is still a prefix
        body = text[match.start("s1"):]
        return None, time_text.strip(), body.strip()
    body = text[match.end():]
    if not body.strip():
        return None, None, text
    return (speaker.strip() if speaker else None), (time_text.strip() if time_text else None), body.strip()


# --- Sentences -------------------------------------------------------------------

# Words after which a dot does not end a sentence.
_ABBREVIATIONS = frozenset(
    [
        "e.g", "i.e", "etc", "mr", "mrs", "ms", "dr", "prof", "st", "vs", "no", "approx", "jr", "sr", "inc", "ltd",
        "co", "dept", "fig", "est", "cf", "al", "ca", "a.m", "p.m", "u.s", "u.k"
    ]
)
_TERMINATOR_RE = re.compile(r"[。！？；]+[”’」』）)]*|[!?]+[\"'”’)\]]*|\.{3}|…|\.(?=[\"'”’)\]]*(?:\s|$))[\"'”’)\]]*|\n")


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`: they end at . ! ? (before a space or the end), at
    Chinese 。！？；, or at a newline; never inside a literal (an e-mail, a URL,
    a number such as 3.5 or v2.3.1, code), after an abbreviation or an initial."""
    masked = _masked(text)
    sentences: list[str] = []
    start = 0
    for match in _TERMINATOR_RE.finditer(masked):
        end = match.end()
        if masked[match.start()] == ".":
            before = text[start:match.start()].rsplit(None, 1)
            word = before[-1].lower() if before else ""
            word = word.lstrip("(\"'“‘")
            following = masked[end:].lstrip()[:1]
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
                continue
            if word[-1:].isdigit() and following and following.islower():
                continue  # "at 5. then" is more often a list or a number than an ending
        sentence = text[start:end].strip()
        if sentence:
            sentences.append(sentence)
        start = end
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


# The extractor reads each turn of a batch twice (facts and tasks, then the
# summary's context): its sentences and their small-talk test are worked out
# once. Larger than a catch-up batch (50 floors), small enough to stay flat.
TURN_CACHE_SIZE = 256


@functools.lru_cache(maxsize=TURN_CACHE_SIZE)
def turn_sentences(text: str) -> tuple[tuple[str, bool], ...]:
    """(sentence, is small talk) for each sentence of a turn's text."""
    return tuple((sentence, is_small_talk(sentence)) for sentence in split_sentences(text))


def normalize_space(text: str) -> str:
    # str.split() splits on exactly what `\s` matches (Unicode white space),
    # without a regular expression.
    return " ".join(unicodedata.normalize("NFKC", text).split())


def collapse_space(text: str) -> str:
    """Runs of whitespace as one space; nothing else changed (no Unicode
    normalization: a value is kept as its writer wrote it)."""
    return re.sub(r"\s+", " ", text).strip()


# --- Small talk --------------------------------------------------------------------

# Whole sentences that carry no content: greetings, thanks, acknowledgements.
_SMALL_TALK_EN = re.compile(
    r"^(hi|hello|hey|hiya|good (morning|afternoon|evening|night)|thanks?( you)?( so much| a lot| very much)?|"
    r"thx|ty|ok(ay)?|k|sure|great|cool|nice|perfect|awesome|got it|sounds good|no problem|np|you're welcome|"
    r"welcome|bye|goodbye|see you|cheers|alright|all right|yes|yeah|yep|no|nope|understood|noted|will do|"
    r"of course|my pleasure|glad to help|happy to help|anytime|wonderful|excellent|lol|haha|hmm|"
    r"that's all( for (now|today))?|that is all( for (now|today))?|nothing else|that's it|"
    r"how can i help( you)?( today)?|how may i help( you)?|is there anything else( i can help with)?|"
    r"have an? (nice|great|good|wonderful|safe|fun|lovely|amazing) \w+( \w+)?|enjoy (your|the) \w+|safe travels|"
    r"take care|good luck|talk (to you )?soon|see you (soon|later|tomorrow)|pretty good|not bad|same here|me too)"
    r"([ ,!.?~]+(there|again|then|so much|a lot|man|buddy|friend|everyone|all))*[ ,!.?~:)]*$",
    re.I,
)
_SMALL_TALK_ZH = re.compile(
    r"^(你好|您好|嗨|哈喽|早上好|晚上好|下午好|晚安|谢谢|谢谢你|谢谢您|多谢|感谢|好的|好|好吧|行|可以|嗯|嗯嗯|哦|噢|"
    r"收到|明白|明白了|了解|知道了|没问题|不客气|不用谢|再见|拜拜|好嘞|好滴|ok|OK|对|是的|没错|太好了|哈哈|"
    r"有什么可以帮你的|有什么可以帮您的|还有什么需要帮忙的|很高兴为您服务|好久不见|最近怎么样|最近好吗|你呢|"
    r"太厉害了|厉害|真棒|太棒了|恭喜|恭喜你|哇|哈哈+|嘿嘿|真的吗|是吗|加油|回头聊|下次聊|是啊|对啊|好久没聊了)"
    r"[啊呀呢吧哦嘛啦了的！!。，,~～？?\s]*$"
)
# Words that, on their own, make a reaction rather than a statement
# ("lol ok", "Haha I know.", "Wow, what's it about?", "That's amazing!").
_FILLER = frozenset(
    [
        "hi", "hello", "hey", "hiya", "yo", "thanks", "thank", "thx", "ty", "ok", "okay", "k", "sure", "great",
        "cool", "nice", "perfect", "awesome", "lol", "lmao", "rofl", "haha", "hahaha", "hehe", "omg", "wow", "whoa",
        "oh", "ah", "aw", "aww", "oops", "oof", "ugh", "yeah", "yes", "yep", "yup", "yea", "no", "nope", "nah",
        "hmm", "hm", "um", "uh", "well", "right", "exactly", "indeed", "totally", "definitely", "absolutely",
        "true", "agreed", "bye", "goodbye", "cya", "later", "soon", "welcome", "cheers", "congrats",
        "congratulations", "amazing", "wonderful", "excellent", "fantastic", "brilliant", "good", "bad", "fine",
        "alright", "glad", "happy", "love", "awesome", "know", "see", "guess", "think", "mean", "sounds", "sound",
        "looks", "look", "seems", "seem", "makes", "make", "sense", "fun", "funny", "interesting", "exciting",
        "sad", "tough", "crazy", "wild", "lovely", "beautiful", "incredible", "impressive", "sweet", "cute",
        "moving", "really", "so", "much", "lot", "anyway", "of", "course", "same", "me", "too", "again", "all",
        "that's", "what's", "it's", "how's", "you're", "i'd", "we're", "they're", "there's", "here's", "talk",
        "long", "time", "way", "call", "good-bye", "night", "morning", "evening", "afternoon", "day", "tonight",
        "buddy", "man", "dude", "friend", "guys", "everyone", "pretty", "yum", "yummy"
    ]
)
_GREETING_WORDS = frozenset([
    "hi", "hello", "hey", "bye", "goodbye", "thanks", "thank", "congrats", "congratulations", "cheers", "dear",
    "welcome", "have", "enjoy"
])


_CLAUSE_SPLIT_RE = re.compile(r"[,，、]")
_ADDRESSED_NAME_RE = re.compile(r"[A-Z][a-z]+(?: [A-Z][a-z]+)?")
_TALK_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d+")


def is_small_talk(sentence: str) -> bool:
    """A greeting, thanks, acknowledgement or bare reaction with nothing else in it."""
    parts = [p.strip(" .!?~:;。！？～：；") for p in _CLAUSE_SPLIT_RE.split(normalize_space(sentence))]
    parts = [p for p in parts if p]
    # "Have a wonderful trip, Maya!": a name addressed after small talk is small talk too.
    if all(_SMALL_TALK_EN.match(p) or _SMALL_TALK_ZH.match(p)
           or (i > 0 and _ADDRESSED_NAME_RE.fullmatch(p)) for i, p in enumerate(parts)):
        return True
    if _CJK_RE.search(sentence):
        return False
    # At most 8 words, every one a filler: read word by word, so that a
    # sentence stops at its first word of content (most stop at once).
    greeting = any_word = False
    for index, match in enumerate(_TALK_WORD_RE.finditer(sentence)):
        if index == 8:
            return False
        any_word = True
        word = match.group()
        lowered = word.lower()
        if index == 0:
            greeting = lowered in _GREETING_WORDS
        if lowered in _FILLER or lowered in _STOPWORDS:
            continue
        if greeting and index > 0 and word[:1].isupper():
            continue  # "Bye Nate!", "Thanks Joanna"
        return False
    return any_word


# --- Language and terms ------------------------------------------------------------


def cjk_ratio(text: str) -> float:
    """Share of CJK characters among the letters of `text`."""
    if text.isascii():
        return 0.0
    cjk = len(_CJK_RE.findall(text))
    latin = sum(len(w) for w in _LATIN_WORD_RE.findall(text))
    total = cjk + latin / 4  # a Latin word of ~4 letters weighs about one Chinese character
    return 0.0 if total == 0 else cjk / total


def detect_language(text: str) -> str:
    """"zh" when Chinese characters dominate, else "en"."""
    return "zh" if cjk_ratio(text) >= 0.3 else "en"


def terms(text: str) -> list[str]:
    """Lowercased English words and Chinese character bigrams, stopwords dropped.

    Bigrams make "咖啡" match "咖啡" without a dictionary; single characters would
    match almost anything. A run of Chinese characters is broken only by a
    word, not by punctuation between them."""
    out: list[str] = []
    cjk_run: list[str] = []
    for token in _WORD_RE.findall(text.lower()):
        # A word token starts with an ASCII letter or digit; anything above is
        # the single ideograph of the pattern's second branch.
        if token[0] >= "\u3400":
            cjk_run.append(token)
            continue
        if cjk_run:
            _add_bigrams(cjk_run, out)
            cjk_run = []
        token = token.strip("'.-_")
        if token and token not in _STOPWORDS and len(token) > 1:
            out.append(token)
    if cjk_run:
        _add_bigrams(cjk_run, out)
    return out


def _add_bigrams(run: list[str], out: list[str]) -> None:
    chars = [c for c in run if c not in _ZH_STOP_CHARS]
    if len(chars) == 1:
        out.append(chars[0])
    out.extend(chars[i] + chars[i + 1] for i in range(len(chars) - 1))


# The summarizer compares each sentence of a batch with the others and with the
# batch's facts and tasks: reuse happens within one batch (50 floors by
# default), so a small cache gets the speed while a long job's memory stays flat.
STEMS_CACHE_SIZE = 256


@functools.lru_cache(maxsize=STEMS_CACHE_SIZE)
def stems(text: str) -> frozenset[str]:
    """Terms with English words cut to five letters: "prefer", "prefers" and
    "preferred" meet without a stemmer."""
    return term_stems(terms(text))


def term_stems(found: Iterable[str]) -> frozenset[str]:
    """`stems` of terms already found (`terms`)."""
    return frozenset(t[:5] if t.isascii() else t for t in found)


def similarity(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' stems (0..1)."""
    return overlap_ratio(stems(a), stems(b))


def overlap_ratio(ta: frozenset[str], tb: frozenset[str]) -> float:
    """`similarity` of two texts given their `stems`."""
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)


def covered(sentence: str, by: str) -> float:
    """How much of the smaller text the other one repeats (overlap coefficient)."""
    ta, tb = stems(sentence), stems(by)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / min(len(ta), len(tb))


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a sentence or word boundary when one
    is near, and never inside a literal (an e-mail, a URL, a number, code)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    masked = _masked(text)
    cut = masked[: limit - 1]
    for sep in ("。", "！", "？", ". ", "; ", "；", "，", ", ", " "):
        pos = cut.rfind(sep)
        if pos >= limit * 0.6:
            return text[: pos + len(sep)].rstrip() + ("" if sep.strip() in {"。", "！", "？", "."} else "…")
    # No boundary near the end: cut at the last space, else before a literal
    # that the cut would split.
    pos = cut.rfind(" ")
    if pos > 0:
        return text[:pos].rstrip() + "…"
    literal = next((m for m in LITERAL_RE.finditer(text) if m.start() < limit - 1 < m.end()), None)
    end = literal.start() if literal else limit - 1
    return text[:end].rstrip() + "…"
