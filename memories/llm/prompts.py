"""Prompts for the network providers.

The four summary requirements are spelled out in every prompt: left out, models
drift, let small talk in, switch language, or let summaries grow with each merge.
The extraction prompt also carries the contracts the offline extractor keeps
(speakers, exact literals, keys that a correction reuses, sources by floor),
and the JSON schema the reply is validated against.
"""

from __future__ import annotations

import functools
import json

from memories.extraction.dialog import HUMAN, dialog_mode, prepare_turns
from memories.extraction.types import ExtractionInput

SUMMARY_RULES = """Summary requirements (all four are mandatory):
- Keep: key facts, user preferences, unfinished tasks, important context and settings.
- Drop: greetings, acknowledgements, repetition, tool-call details.
- Write in the same language as the most recent conversation.
- At most 500 characters."""

WRITING_RULES = """Writing rules:
- Every summary sentence names its speaker, by name when the turn gives one ("Nate: won a chess
  tournament"), else by role ("User: ...", "Assistant: ..."); in a Chinese summary the role labels
  are Chinese too ("用户：", "助手："). Never mix languages in labels.
- Copy e-mail addresses, URLs, phone numbers, numbers, dates, versions and code exactly as written
  (no added spaces, no rounding, no translation): maya@example.com stays maya@example.com, v2.3.1 stays v2.3.1."""

FACT_RULES = """Facts:
- Durable statements about a person: identity, contact details, location, work, family, health
  (allergies first), constraints, budgets, preferences. Facts come from every speaker in a dialog of
  two people, and about third parties ("my partner Sam is allergic to peanuts" is a fact about Sam).
  Small talk, opinions of the moment and advice are not facts; when unsure, leave it out.
- Keys are lowercase and dotted. The user of an assistant: user.<attribute> (user.name, user.email,
  user.location, user.budget, user.preference.<topic>, user.allergy.<thing>). A person with a name:
  person.<name>.<attribute> (person.nate.location, person.sam.allergy.peanuts). Someone known only by
  relation: <owner key>.<relation>.<attribute> (user.sister.location).
- A correction ("changed my mind", "now", "instead", "rather than", "no longer", "actually") states the
  new value under the SAME key as the value it replaces: reuse the key shown in [Known facts].
- importance: names, allergies and health, deadlines 0.85-0.95; contact details, location, work,
  budget 0.7-0.85; preferences 0.5-0.7; anything lighter is not a fact.
- floor_no is the floor the fact mainly comes from; source_floors lists every floor it was made from."""

LOOP_RULES = """Open loops and resolutions:
- An open loop is a task still to be done: a request with a deadline ("please book the hotel by
  Friday"), something someone asks to be reminded of, a commitment. A question answered in the next
  turn is not one. Keep the deadline in the content.
- A resolution says that a turn closed an open task: target is the task's id from [Open tasks] or
  new:<index into open_loops>."""


def _schema() -> str:
    from memories.llm.base import ExtractionOut

    return json.dumps(ExtractionOut.model_json_schema(), ensure_ascii=False, separators=(",", ":"))


@functools.lru_cache(maxsize=1)
def extract_system() -> str:
    return f"""You maintain long-term memory for a conversation, between a user and an assistant or between two people.
Read the existing summary, known facts, open tasks and the new turns, and reply with ONE JSON object:
{{
  "summary": "summary of the NEW turns only",
  "summary_floors": [12, 13],
  "rolling_summary": "the existing summary merged with the new turns",
  "facts": [{{"key": "user.location", "value": "Berlin", "content": "User lives in Berlin", "importance": 0.8, "confidence": 0.9, "floor_no": 12, "source_floors": [12]}}],
  "open_loops": [{{"content": "Renew passport before June 3", "importance": 0.85, "floor_no": 13, "source_floors": [13]}}],
  "resolutions": [{{"target": "<open task id, or new:<index into open_loops>>", "floor_no": 15}}]
}}
Every floor number must be one of the new turns' floor numbers. summary_floors lists the floors the
summary says something of.

{FACT_RULES}

{LOOP_RULES}

{WRITING_RULES}

{SUMMARY_RULES}

The reply is validated against this JSON schema:
{_schema()}
Reply with the JSON object only."""


COMPACT_SYSTEM = f"""Merge these conversation summaries (oldest first) into one summary.
Later statements win over earlier ones; drop tasks reported done. Keep each sentence's speaker label.
{WRITING_RULES}
{SUMMARY_RULES}
Reply with one JSON object: {{"summary": "..."}}"""


def extraction_user(data: ExtractionInput) -> str:
    turns = prepare_turns(data.turns)
    human = dialog_mode(turns) == HUMAN
    speakers = sorted({t.speaker for t in turns if t.speaker})
    if human:
        who = f"two people ({', '.join(speakers)})" if speakers else "two people (roles user and assistant)"
    else:
        who = "a user and an assistant"
    lines = [f"[Dialog] between {who}", "", "[Existing summary]", data.previous_summary or "(none)", "",
             "[Known facts]"]
    lines += [f"- {fact.key}: {fact.content}" for fact in data.known_facts] or ["(none)"]
    lines += ["", "[Open tasks]"]
    lines += [f"- {loop.id}: {loop.content}" for loop in data.open_loops] or ["(none)"]
    lines += ["", "[New turns]"]
    for turn in turns:
        speaker = turn.speaker or turn.role
        when = turn.time_text or (turn.created_at.isoformat(timespec="minutes") if turn.created_at else "")
        lines.append(f"[floor {turn.floor_no}] {speaker}" + (f" ({when})" if when else "") + f": {turn.text}")
    return "\n".join(lines)


def compaction_user(summaries: list[str]) -> str:
    return "\n\n".join(f"[Summary {index + 1}]\n{text}" for index, text in enumerate(summaries))


def correction(user: str, reply: str, error: str) -> str:
    return (
        f"{user}\n\n[Your previous reply]\n{reply[:4000]}\n\n"
        f"[It was rejected]\n{error}\nReply again with one JSON object that follows the format exactly."
    )
