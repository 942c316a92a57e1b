"""The service's own words, recognised when an agent appends them back.

An agent asks `/context` for a prompt and often stores what it sent or what
the model answered: the memory section (`## Relevant memories` and its
lines), the conversation summary, the attached stores, a recalled memory
quoted line by line, or the model repeating a fact it was given ("as you
told me, you're allergic to peanuts"). None of that is news: extracted
again it would become a second memory of what is already one, or a summary
of a summary. So the extractor never reads it:

- the sections the context assembly writes, from their header to the
  first blank line;
- a recalled memory's line (`- [fact, about this user] ...`, `about someone this user knows`,
  `- [summary of floors 3-9] ...`, `- [open task] ...`);
- a sentence that says it repeats what the other speaker told
  ("as you told me", "you mentioned", "如你所说"): a restatement confirms a
  memory (the writer finds its key and value unchanged) but states nothing new.
"""

from __future__ import annotations

import re

# The headers `memories.recall.context` and `selection` write (kept in step by
# a test that assembles a context and strips it).
INJECTED_HEADERS = ("## Relevant memories", "## Conversation summary", "## Attached memory stores")
# A section runs from its header to the first blank line: the assembly joins
# sections with one, and writes none inside a section.
_SECTION_RE = re.compile(
    r"^(?:" + "|".join(re.escape(h) for h in INJECTED_HEADERS) + r")[ \t]*(?:\n[^\n]*\S[^\n]*)*\n?", re.M)
# A memory's line as `selection.memory_line` renders it.
_MEMORY_LINE_RE = re.compile(
    r"^[ \t]*- \[(?:fact|summary|overview|open task)(?: of floors \d+-\d+)?(?:, (?:global|about this user|about someone this user knows))?\] .*$\n?",
    re.M)
_RESTATEMENT_RE = re.compile(
    r"\b(?:as you (?:told me|said|mentioned|noted|shared)|you (?:told me|mentioned|said) (?:earlier|before|that)|"
    r"(?:from|based on) what you (?:told|shared with) me|as i (?:recall|remember)|i remember you (?:said|told|mentioned)|"
    r"you(?:'ve| have) (?:told|mentioned to) me)\b|如你所说|你之前(?:说|提到)过|你告诉过我|我记得你说",
    re.I,
)
_SENTENCE_RE = re.compile(r"[^.!?。！？\n]*(?:[.!?。！？]+|\n|$)")


def strip_injected(text: str) -> str:
    """`text` without what the service injected or a speaker restated;
    unchanged (the same object) when there is none."""
    if "## " in text:
        text = _SECTION_RE.sub("", text)
    if "- [" in text:
        text = _MEMORY_LINE_RE.sub("", text)
    if _RESTATEMENT_RE.search(text):
        text = "".join(s for s in _SENTENCE_RE.findall(text) if not _RESTATEMENT_RE.search(s)).strip()
    return text
