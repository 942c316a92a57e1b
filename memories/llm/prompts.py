"""Prompts for the network providers.

The four summary requirements are spelled out in every prompt: left out, models
drift, let small talk in, switch language, or let summaries grow with each merge.
"""

from __future__ import annotations

from memories.extraction.types import ExtractionInput

SUMMARY_RULES = """Summary requirements (all four are mandatory):
- Keep: key facts, user preferences, unfinished tasks, important context and settings.
- Drop: greetings, acknowledgements, repetition, tool-call details.
- Write in the same language as the most recent conversation.
- At most 500 characters."""

EXTRACT_SYSTEM = f"""You maintain long-term memory for a conversation between a user and an assistant.
Read the existing summary, known facts, open tasks and the new turns, and reply with ONE JSON object:
{{
  "summary": "summary of the NEW turns only",
  "rolling_summary": "the existing summary merged with the new turns",
  "facts": [{{"key": "user.location", "value": "Berlin", "content": "User lives in Berlin", "importance": 0.8, "confidence": 0.9, "floor_no": 12}}],
  "open_loops": [{{"content": "Renew passport before June", "importance": 0.7, "floor_no": 13}}],
  "resolutions": [{{"target": "<open task id, or new:<index into open_loops>>", "floor_no": 15}}]
}}
Facts are durable statements about the user (identity, location, preferences, constraints). Use stable,
lowercase dotted keys (user.name, user.email, user.location, user.preference.<topic>) so that a changed
value reuses the same key. Open loops are tasks still to be done. A resolution says that a turn closed
an open task. floor_no must be one of the new turns' floor numbers. Use importance and confidence in [0, 1].

{SUMMARY_RULES}
Reply with the JSON object only."""

COMPACT_SYSTEM = f"""Merge these conversation summaries (oldest first) into one summary.
Later statements win over earlier ones; drop tasks reported done.
{SUMMARY_RULES}
Reply with one JSON object: {{"summary": "..."}}"""


def extraction_user(data: ExtractionInput) -> str:
    lines = ["[Existing summary]", data.previous_summary or "(none)", "", "[Known facts]"]
    lines += [f"- {fact.key}: {fact.content}" for fact in data.known_facts] or ["(none)"]
    lines += ["", "[Open tasks]"]
    lines += [f"- {loop.id}: {loop.content}" for loop in data.open_loops] or ["(none)"]
    lines += ["", "[New turns]"]
    lines += [f"[floor {turn.floor_no}] {turn.role}: {turn.text}" for turn in data.turns if turn.role in {"user", "assistant"}]
    return "\n".join(lines)


def compaction_user(summaries: list[str]) -> str:
    return "\n\n".join(f"[Summary {index + 1}]\n{text}" for index, text in enumerate(summaries))


def correction(user: str, reply: str, error: str) -> str:
    return (
        f"{user}\n\n[Your previous reply]\n{reply[:4000]}\n\n"
        f"[It was rejected]\n{error}\nReply again with one JSON object that follows the format exactly."
    )
