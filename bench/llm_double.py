"""A scripted language model that answers the pipeline's prompts the way the
offline extractor would: it reads the batch back out of the prompt (who
speaks, the summary so far, the known facts and open tasks shown, the new
turns) and replies with the extraction the rule-based extractor makes of
exactly that, in the reply format the prompt asks for.

So a network provider's path can be checked against the extraction
contracts without a real model: whatever the prompt leaves out (a speaker, a
turn's role, a task's name, a fact's key) is missing from the answer too.
Used by bench/llm_cost.py (behind a local OpenAI-compatible server) and by
the tests (behind a mock HTTP transport).
"""

from __future__ import annotations

import json
import re
from datetime import datetime

import memories.llm.prompts as prompts
from memories.extraction import extractor
from memories.extraction.types import ExtractionInput, KnownFact, OpenLoopRef, Turn

_SPEAKERS_RE = re.compile(r"; speakers (.*)$")
_SPEAKER_RE = re.compile(r"(.+?) \((user|assistant)\)")
_TURN_RE = re.compile(r"^(\d+) ([^:]+): (.*)$")
_FACT_RE = re.compile(r"^- ([^:]+): (.*)$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _unescape(text: str) -> str:
    return text.replace("\\n", "\n")


def read_prompt(user: str) -> ExtractionInput:
    """The batch as the prompt shows it (message ids are `f<floor>`)."""
    lines = user.split("\n")
    roles: dict[str, str] = {}
    match = _SPEAKERS_RE.search(lines[0])
    if match:
        roles = {name: role for name, role in (_SPEAKER_RE.fullmatch(part).groups()
                                               for part in match.group(1).split(", "))}
    summary = lines[1].removeprefix("Summary so far: ")
    section = None
    facts: list[KnownFact] = []
    loops: list[OpenLoopRef] = []
    turns: list[Turn] = []
    day: str | None = None
    for line in lines[2:]:
        if line in ("Known facts:", "Open tasks:", "New turns:"):
            section = line
            continue
        if line == "(none)":
            continue
        if section == "Known facts:":
            key, content = _FACT_RE.match(line).groups()
            facts.append(KnownFact(id=f"fact_{len(facts)}", key=key, content=content))
        elif section == "Open tasks:":
            alias, content = _FACT_RE.match(line).groups()
            loops.append(OpenLoopRef(id=alias, content=content))
        elif line.startswith("# "):
            day = line[2:]
        else:
            floor, speaker, text = _TURN_RE.match(line).groups()
            role = roles.get(speaker, speaker if speaker in ("user", "assistant") else "user")
            created = datetime.fromisoformat(day) if day and _DATE_RE.match(day) else None
            turns.append(Turn(floor_no=int(floor), message_id=f"f{floor}", role=role, text=_unescape(text),
                              speaker=speaker if speaker in roles else None,
                              time_text=None if created else day, created_at=created))
    return ExtractionInput(previous_summary="" if summary == "(none)" else _unescape(summary),
                           known_facts=facts, open_loops=loops, turns=turns)


def answer_extraction(user: str) -> dict:
    """The reply to an extraction prompt, as a JSON-ready object."""
    data = read_prompt(user)
    result = extractor.extract(data)
    floor = {t.message_id: t.floor_no for t in data.turns}

    def floors(ids: list[str]) -> list[int]:
        return [floor[i] for i in ids if i in floor]

    return {
        "summary": result.summary,
        "summary_floors": floors(result.summary_sources),
        "rolling_summary": result.rolling_summary,
        "facts": [{"key": f.key, "value": f.value, "content": f.content, "importance": f.importance,
                   "confidence": f.confidence, "floor_no": f.floor_no, "source_floors": floors(f.message_ids)}
                  for f in result.facts],
        "open_loops": [{"content": loop.content, "importance": loop.importance, "floor_no": loop.floor_no,
                        "source_floors": floors(loop.message_ids)} for loop in result.open_loops],
        "resolutions": [{"target": r.target, "floor_no": r.floor_no} for r in result.resolutions],
    }


def answer_compaction(user: str) -> dict:
    summaries = [part.split("\n", 1)[1] if "\n" in part else "" for part in re.split(r"\n\n(?=\[Summary \d+\]\n)", user)]
    return {"summary": extractor.compact(summaries) or "-"}


def answer(system: str, user: str) -> str:
    """The model's reply text to one (system, user) request."""
    if system == prompts.COMPACT_SYSTEM:
        return json.dumps(answer_compaction(user), ensure_ascii=False)
    return json.dumps(answer_extraction(user), ensure_ascii=False)
