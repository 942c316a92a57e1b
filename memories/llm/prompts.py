"""Prompts for the network providers.

The four summary requirements are spelled out in every prompt: left out, models
drift, let small talk in, switch language, or let summaries grow with each merge.
The extraction prompt also carries the contracts the offline extractor keeps
(speakers, exact literals, keys that a correction reuses, sources by floor),
and the JSON schema the reply is validated against.
"""

from __future__ import annotations

import functools

from memories.extraction.dialog import HUMAN, dialog_mode, prepare_turns
from memories.extraction.summarizer.sections import SUMMARY_MAX_CHARS
from memories.extraction.text import clip
from memories.extraction.types import ExtractionInput

# The summary so far, as a batch's prompt carries it: the rolling summary is
# clipped to SUMMARY_MAX_CHARS when it is written; this holds for one carried
# in from elsewhere (the conversation's own metadata) too.
SUMMARY_PROMPT_CHARS = SUMMARY_MAX_CHARS

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
  new value under the SAME key as the value it replaces: reuse the key shown in Known facts.
- Text the assistant repeats from memory ("as you told me, you're allergic to peanuts") or that quotes
  a known fact back is no new fact: leave it out.
- importance: names, allergies and health, deadlines 0.85-0.95; contact details, location, work,
  budget 0.7-0.85; preferences 0.5-0.7; anything lighter is not a fact.
- floor_no is the floor the fact mainly comes from; source_floors lists every floor it was made from."""

LOOP_RULES = """Open loops and resolutions:
- An open loop is a task still to be done: a request with a deadline ("please book the hotel by
  Friday"), something someone asks to be reminded of, a commitment. A question answered in the next
  turn is not one. Keep the deadline in the content.
- A resolution says that a turn closed an open task: target is the task's id from Open tasks (T1, T2 ...)
  or new:<index into open_loops>."""


@functools.lru_cache(maxsize=1)
def extract_system() -> str:
    """The same text for every call of every conversation: what a provider
    caches as the prompt's prefix. Whatever varies (summary, facts, tasks,
    turns) is in the user message."""
    return f"""You maintain long-term memory for a conversation, between a user and an assistant or between two people.
Read the summary so far, the known facts and open tasks that may concern the new turns, and the new
turns, and reply with ONE JSON object and nothing else:
{{
  "summary": "summary of the NEW turns only",
  "summary_floors": [12, 13],
  "rolling_summary": "the summary so far merged with the new turns",
  "facts": [{{"key": "user.location", "value": "Berlin", "content": "User lives in Berlin", "importance": 0.8, "confidence": 0.9, "floor_no": 12, "source_floors": [12]}}],
  "open_loops": [{{"content": "Renew passport before June 3", "importance": 0.85, "floor_no": 13, "source_floors": [13]}}],
  "resolutions": [{{"target": "T1", "floor_no": 15}}]
}}
A new turn is written "<floor> <speaker>: <text>"; a line "# <date>" gives the date of the turns after it.
Every floor number in the reply must be one of the new turns' floors. summary_floors lists the floors
the summary says something of. facts, open_loops and resolutions may be empty lists.

{FACT_RULES}

{LOOP_RULES}

{WRITING_RULES}

{SUMMARY_RULES}"""


COMPACT_SYSTEM = f"""Merge these conversation summaries (oldest first) into one summary.
Later statements win over earlier ones; drop tasks reported done. Keep each sentence's speaker label.
{WRITING_RULES}
{SUMMARY_RULES}
Reply with one JSON object: {{"summary": "..."}}"""


def task_alias(index: int) -> str:
    """How the prompt names the `index`-th open task: "T1", "T2" ... (a
    memory id costs several tokens a task, and a model copies a short name
    more reliably)."""
    return f"T{index + 1}"


def one_line(text: str) -> str:
    """A text on one line of the prompt: its line breaks written as \\n."""
    return text.replace("\n", "\\n")


def _date_of(turn) -> str:
    """The day a turn was said, as the client wrote it ("8 May, 2023" of
    "1:56 pm on 8 May, 2023") or else as stored: printed once per run of
    turns of one day, not on every turn (the time of day rarely matters to a
    memory and costs tokens on every line)."""
    if turn.time_text and " on " in turn.time_text:
        return turn.time_text.rsplit(" on ", 1)[-1].strip()
    return turn.created_at.date().isoformat() if turn.created_at else ""


def speaker_roles(turns) -> dict[str, str]:
    """Each named speaker's role, first seen first."""
    roles: dict[str, str] = {}
    for turn in turns:
        if turn.speaker and turn.speaker not in roles:
            roles[turn.speaker] = turn.role
    return roles


def extraction_user(data: ExtractionInput) -> str:
    """The batch: who speaks, the summary so far (capped), the known facts and
    open tasks the pipeline chose for it, and the new turns, one line each."""
    turns = prepare_turns(data.turns)
    human = dialog_mode(turns) == HUMAN
    roles = speaker_roles(turns)
    who = "two people" if human else "a user and an assistant"
    if roles:
        who += "; speakers " + ", ".join(f"{name} ({role})" for name, role in roles.items())
    summary = one_line(clip(data.previous_summary, SUMMARY_PROMPT_CHARS)) or "(none)"
    lines = [f"Dialog between {who}", f"Summary so far: {summary}", "Known facts:"]
    lines += [f"- {fact.key}: {fact.content}" for fact in data.known_facts] or ["(none)"]
    lines.append("Open tasks:")
    lines += [f"- {task_alias(i)}: {loop.content}" for i, loop in enumerate(data.open_loops)] or ["(none)"]
    lines.append("New turns:")
    day = None
    for turn in turns:
        when = _date_of(turn)
        if when and when != day:
            lines.append(f"# {when}")
            day = when
        lines.append(f"{turn.floor_no} {turn.speaker or turn.role}: {one_line(turn.text.strip())}")
    return "\n".join(lines)


def compaction_user(summaries: list[str]) -> str:
    return "\n\n".join(f"[Summary {index + 1}]\n{text}" for index, text in enumerate(summaries))


def correction(user: str, reply: str, error: str) -> str:
    return (
        f"{user}\n\n[Your previous reply]\n{reply[:4000]}\n\n"
        f"[It was rejected]\n{error}\nReply again with one JSON object that follows the format exactly."
    )
