"""The recall index's analyser: text to BM25 terms, the same way for what is
indexed and for queries, in English and Chinese alike.

- English (and other Latin-script) words: lowercased, stopwords dropped,
  Snowball-stemmed ("tournaments" and "tournament" meet).
- Chinese, Japanese kanji: character bigrams over each run of ideographs
  ("喜欢喝咖啡" -> 喜欢 欢喝 喝咖 咖啡), a lone ideograph as itself. Bigrams
  need no dictionary and match any word of two or more characters.
- Numbers stay whole ("2023", "42"); an email or URL is split into its words,
  so "maya@example.com" is found by "maya" and by "example".

Terms hold only [a-z0-9] and ideographs, so they are safe as FTS5 and
tsquery words without quoting rules beyond a plain double quote.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import Stemmer

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[a-z0-9]+|[{_CJK}]+")
_CJK_FIRST = "\u3400"

STOPWORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "aren't", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "can't", "cannot", "could", "couldn't", "did", "didn't", "do", "does", "doesn't", "doing", "don't", "down", "during", "each", "few", "for", "from", "further", "had", "hadn't", "has", "hasn't", "have", "haven't", "having", "he", "he'd", "he'll", "he's", "her", "here", "here's", "hers", "herself", "him", "himself", "his", "how", "how's", "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "isn't", "it", "it's", "its", "itself", "let's", "me", "more", "most", "mustn't", "my", "myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours", "ourselves", "out", "over", "own", "same", "shan't", "she", "she'd", "she'll", "she's", "should", "shouldn't", "so", "some", "such", "than", "that", "that's", "the", "their", "theirs", "them", "themselves", "then", "there", "there's", "these", "they", "they'd", "they'll", "they're", "they've", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "wasn't", "we", "we'd", "we'll", "we're", "we've", "were", "weren't", "what", "what's", "when", "when's", "where", "where's", "which", "while", "who", "who's", "whom", "why", "why's", "with", "won't", "would", "wouldn't", "you", "you'd", "you'll", "you're", "you've", "your", "yours", "yourself", "yourselves", "s", "t", "d", "ll", "m", "re", "ve", "just", "yeah", "yes", "oh", "ok", "okay", "um", "uh", "hey", "hi", "hello", "really", "like", "get", "got", "going", "gonna", "will", "shall", "may", "might", "must", "lot", "lots", "much", "many", "thing", "things", "something", "anything", "everything", "one"]
)
# Function characters that make no bigram worth matching on their own
# ("的了" says nothing; "咖啡" does).
_ZH_STOP_CHARS = frozenset("的了是我你他她它们在和也就都而及与着吗呢吧啊呀嗯哦个这那有没不很还又被把给让")

_stemmer = Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=50_000)
def _stem(word: str) -> str:
    return _stemmer.stemWord(word)


def _cjk_terms(run: str) -> list[str]:
    if len(run) == 1:
        return [] if run in _ZH_STOP_CHARS else [run]
    return [run[i:i + 2] for i in range(len(run) - 1)
            if not (run[i] in _ZH_STOP_CHARS and run[i + 1] in _ZH_STOP_CHARS)]


def analyze(text: str | None) -> list[str]:
    """BM25 terms of `text`, in order, with repeats (term frequency counts)."""
    if not text:
        return []
    normalized = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")
    # "don't" -> "don't" is a stopword; drop the apostrophe forms before splitting.
    out: list[str] = []
    for raw in normalized.split():
        word_forms = raw.strip(".,!?;:()[]{}\"'*_~`<>")
        if word_forms in STOPWORDS:
            continue
        # Most words are one run of [a-z0-9] once their punctuation is off
        # (none of it is a letter or digit): that run is the only token, found
        # without the pattern (a search per word was most of the analysis).
        tokens = (word_forms,) if word_forms.isascii() and word_forms.isalnum() else _TOKEN_RE.findall(raw)
        for token in tokens:
            # A token is a run of [a-z0-9] or a run of ideographs: its first
            # character tells which.
            if token[0] >= _CJK_FIRST:
                out.extend(_cjk_terms(token))
            elif token.isdigit():
                out.append(token)
            elif len(token) > 1 and token not in STOPWORDS:
                out.append(_stem(token))
    return out


def query_terms(text: str | None) -> list[str]:
    """The distinct terms of a query, in order of first appearance."""
    return list(dict.fromkeys(analyze(text)))


def terms_text(terms: list[str]) -> str:
    """Terms as stored: space-separated with a space at both ends, so that
    `' term '` counts whole-term occurrences with one `str.count`."""
    return " " + " ".join(terms) + " " if terms else ""


def cjk_share(terms: str | list[str]) -> float:
    """The share of ideograph bigrams among the words of `terms` (analysed
    terms, or their stored text); numbers count for neither script.
    Embedding models place texts of different scripts at different cosines
    from each other, related or not (see `dense.script_shift`)."""
    words = terms.split() if isinstance(terms, str) else terms
    ideographic = latin = 0
    for word in words:
        if word[0] >= _CJK_FIRST:
            ideographic += 1
        elif not word.isdigit():
            latin += 1
    return ideographic / (ideographic + latin) if ideographic else 0.0
