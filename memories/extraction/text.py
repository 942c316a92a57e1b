"""Text helpers shared by the offline extractor, the summarizer and relevance
scoring: language detection, sentence splitting, small-talk filters, and a
tokenization that works for English words and Chinese characters alike."""

from __future__ import annotations

import functools
import re
import unicodedata

# CJK Unified Ideographs (+ extension A and compatibility ideographs).
_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'\-]*")
# A sentence ends at . ! ? (followed by space or end), Chinese 。！？；, or a newline.
_SENTENCE_RE = re.compile(r"[^。！？；!?\n]+?(?:[。！？；!?]+|(?<![0-9A-Z])\.(?=\s|$)|\n|$)", re.S)
_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'@._\-]*|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# Words too common to say anything about relevance.
_STOPWORDS = frozenset(
    ["a", "an", "the", "and", "or", "but", "if", "so", "of", "to", "in", "on", "at", "for", "with", "by", "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "i", "me", "my", "we", "our", "you", "your", "he", "she", "they", "them", "his", "her", "their", "what", "which", "who", "whom", "how", "when", "where", "why", "do", "does", "did", "done", "have", "has", "had", "can", "could", "will", "would", "should", "shall", "may", "might", "must", "not", "no", "yes", "just", "also", "about", "into", "than", "then", "there", "here", "up", "down", "out", "over", "again", "very", "too", "please", "let", "lets", "i'm", "i've", "i'll", "it's", "that's", "don't"]
)
_ZH_STOP_CHARS = frozenset("的了是我你他她它们在和也就都而及与着吗呢吧啊呀嗯哦个这那有没不")

# Whole sentences that carry no content: greetings, thanks, acknowledgements.
_SMALL_TALK_EN = re.compile(
    r"^(hi|hello|hey|hiya|good (morning|afternoon|evening|night)|thanks?( you)?( so much| a lot| very much)?|"
    r"thx|ty|ok(ay)?|k|sure|great|cool|nice|perfect|awesome|got it|sounds good|no problem|np|you're welcome|"
    r"welcome|bye|goodbye|see you|cheers|alright|all right|yes|yeah|yep|no|nope|understood|noted|will do|"
    r"of course|my pleasure|glad to help|happy to help|anytime|wonderful|excellent|lol|haha|hmm|"
    r"that's all( for (now|today))?|that is all( for (now|today))?|nothing else|that's it|"
    r"how can i help( you)?( today)?|how may i help( you)?|is there anything else( i can help with)?)"
    r"([ ,!.?~]+(there|again|then|so much|a lot|man|buddy|friend|everyone|all))*[ ,!.?~:)]*$",
    re.I,
)
_SMALL_TALK_ZH = re.compile(
    r"^(你好|您好|嗨|哈喽|早上好|晚上好|下午好|晚安|谢谢|谢谢你|谢谢您|多谢|感谢|好的|好|好吧|行|可以|嗯|嗯嗯|哦|噢|"
    r"收到|明白|明白了|了解|知道了|没问题|不客气|不用谢|再见|拜拜|好嘞|好滴|ok|OK|对|是的|没错|太好了|哈哈|"
    r"有什么可以帮你的|有什么可以帮您的|还有什么需要帮忙的|很高兴为您服务)"
    r"[啊呀呢吧哦嘛啦了的！!。，,~～？?\s]*$"
)


def cjk_ratio(text: str) -> float:
    """Share of CJK characters among the letters of `text`."""
    cjk = len(_CJK_RE.findall(text))
    latin = sum(len(w) for w in _LATIN_WORD_RE.findall(text))
    total = cjk + latin / 4  # a Latin word of ~4 letters weighs about one Chinese character
    return 0.0 if total == 0 else cjk / total


def detect_language(text: str) -> str:
    """"zh" when Chinese characters dominate, else "en"."""
    return "zh" if cjk_ratio(text) >= 0.3 else "en"


def split_sentences(text: str) -> list[str]:
    sentences = []
    for match in _SENTENCE_RE.finditer(text):
        sentence = match.group(0).strip()
        if sentence:
            sentences.append(sentence)
    return sentences


def normalize_space(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()


def is_small_talk(sentence: str) -> bool:
    """A greeting, thanks or acknowledgement with nothing else in it."""
    parts = [p.strip(" .!?~:;。！？～：；") for p in re.split(r"[,，、]", normalize_space(sentence))]
    parts = [p for p in parts if p]
    return all(_SMALL_TALK_EN.match(p) or _SMALL_TALK_ZH.match(p) for p in parts)


def terms(text: str) -> list[str]:
    """Lowercased English words and Chinese character bigrams, stopwords dropped.

    Bigrams make "咖啡" match "咖啡" without a dictionary; single characters would
    match almost anything."""
    out: list[str] = []
    cjk_run: list[str] = []

    def flush() -> None:
        chars = [c for c in cjk_run if c not in _ZH_STOP_CHARS]
        if len(chars) == 1:
            out.append(chars[0])
        out.extend(chars[i] + chars[i + 1] for i in range(len(chars) - 1))
        cjk_run.clear()

    for token in _WORD_RE.findall(text.lower()):
        if _CJK_RE.match(token):
            cjk_run.append(token)
            continue
        flush()
        token = token.strip("'.-_")
        if token and token not in _STOPWORDS and len(token) > 1:
            out.append(token)
    flush()
    return out


# The summarizer compares each sentence of a batch with the others and with the
# batch's facts and tasks: reuse happens within one batch (50 floors by
# default), so a small cache gets the speed while a long job's memory stays flat.
STEMS_CACHE_SIZE = 256


@functools.lru_cache(maxsize=STEMS_CACHE_SIZE)
def stems(text: str) -> frozenset[str]:
    """Terms with English words cut to five letters: "prefer", "prefers" and
    "preferred" meet without a stemmer."""
    return frozenset(t[:5] if t.isascii() else t for t in terms(text))


def similarity(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' stems (0..1)."""
    ta, tb = stems(a), stems(b)
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
    """At most `limit` characters, cut at a sentence or word boundary when one is near."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    for sep in ("。", "！", "？", ". ", "; ", "；", "，", ", ", " "):
        pos = cut.rfind(sep)
        if pos >= limit * 0.6:
            return cut[: pos + len(sep)].rstrip() + ("" if sep.strip() in {"。", "！", "？", "."} else "…")
    return cut + "…"
