"""The offline extractor: one batch of turns in, a micro summary, facts, open
loops, resolutions and the next rolling summary out, each with the messages
it was made from. No network, deterministic.
"""

from __future__ import annotations

import dataclasses
import re

from django.utils import timezone

from memories.extraction.dates import due_date
from memories.extraction.dialog import HUMAN, dialog_mode, prepare_turns
from memories.extraction.patterns.facts import match_facts
from memories.extraction.patterns.values import FactMatch, Subject, speaker_subject
from memories.extraction.summarizer.composition import compose, summarize_turns
from memories.extraction.summarizer.merging import drop_stale, fact_value, merge_summaries
from memories.extraction.summarizer.scoring import Candidate, context_sentences, without
from memories.extraction.summarizer.sections import ROLLING_SHARES, Piece, parse_sections, split_label
from memories.extraction.tasks import has_deadline, match_closure, match_other_task, match_task
from memories.extraction.text import detect_language, similarity, stems, term_stems, turn_sentences
from memories.extraction.types import (
    ExtractedFact,
    ExtractedLoop,
    ExtractionInput,
    ExtractionResult,
    Resolution,
    Turn,
)

# A closure matches an open loop when they share this much of the smaller term
# set ("I renewed my passport" vs "renew passport before June" share "passport").
RESOLVE_OVERLAP = 0.3
# A bare "done!" / "搞定了" closes the most recent loop only if it was opened
# within this many floors: further back, "done" is more likely about something else.
BARE_CLOSURE_WINDOW = 6
# A task with a due date is what the next turns most need; one without, less.
DEADLINE_LOOP_IMPORTANCE = 0.85
LOOP_IMPORTANCE = 0.7
# The rolling summary takes this many of the batch's best context sentences;
# the rest of its context is carried from the previous rolling summary.
ROLLING_BATCH_CONTEXT = 4

_TASK_LABELS = ("To do: ", "待办：")
_NAME_IN_FACT = re.compile(r"^(?:User's name is |用户叫)(?P<name>.+)$")


def _overlap(stems_a: frozenset[str], b: str) -> float:
    """How much of the smaller of a closure's stems and task `b`'s the other shares."""
    stems_b = stems(_strip_task_label(b))  # cached: every closure compares each open task
    if not stems_a or not stems_b:
        return 0.0
    return len(stems_a & stems_b) / min(len(stems_a), len(stems_b))


def _strip_task_label(text: str) -> str:
    for label in _TASK_LABELS:
        if text.startswith(label):
            return text[len(label):]
    return text


def conversation_language(data: ExtractionInput, turns: list[Turn] | None = None) -> str:
    """The language of the latest turns (the summary rule: write as the conversation does)."""
    turns = prepare_turns(data.turns) if turns is None else turns
    recent = [t.text for t in turns][-20:]
    text = " ".join(recent) or data.previous_summary
    return detect_language(text)


class _Batch:
    """What one batch states, with the messages each item came from."""

    def __init__(self, data: ExtractionInput) -> None:
        self.data = data
        self.facts: list[ExtractedFact] = []
        self.matches: list[FactMatch] = []  # beside `facts`: renders a fact in the summary's language
        self.loops: list[ExtractedLoop] = []
        self.resolutions: list[Resolution] = []
        self.open: list[tuple[str, str, int | None]] = [(o.id, o.content, o.floor_no) for o in data.open_loops]
        self.done: list[Piece] = []

    # --- facts

    def _retarget(self, fact: FactMatch) -> FactMatch:
        """"I no longer drink coffee" ends the fact that said coffee, whatever
        its key: the new fact takes that key so that the old one is replaced."""
        if fact.kind != "no_longer":
            return fact
        prefix = f"{fact.subject.key}.preference."
        value = fact.value.lower()
        earlier = [(f.key, f.content) for f in self.facts] + [(k.key, k.content) for k in reversed(self.data.known_facts)]
        for key, content in earlier:
            if key.startswith(prefix) and value in content.lower() and key != fact.key:
                return dataclasses.replace(fact, key=key)
        return fact

    def add_fact(self, fact: FactMatch, turn: Turn, *, zh: bool) -> None:
        # Written in the conversation's language, whatever the sentence's: a
        # fact is read back into this conversation's summaries and context.
        fact = dataclasses.replace(self._retarget(fact), content=fact.render(zh))
        # The same value of the same attribute and subject, said again (by
        # whoever restates it, named or by relation): one fact, the first
        # wording kept ("User's partner Tom ..." over a bare "Tom ...").
        existing = next((f for f in reversed(self.facts) if f.key == fact.key), None)
        if existing is not None and (existing.content == fact.content
                                     or existing.value.lower() == fact.value.lower()):
            if turn.message_id not in existing.message_ids:
                existing.message_ids.append(turn.message_id)
            return
        latest_known = next((k for k in reversed(self.data.known_facts) if k.key == fact.key), None)
        if latest_known is not None and not any(f.key == fact.key for f in self.facts) and (
                latest_known.content == fact.content
                or (fact_value(latest_known.content) or "").lower() == fact.value.lower()
                or (fact.kind == "allergy" and fact.value.lower() in latest_known.content.lower())):
            return
        self.facts.append(ExtractedFact(
            key=fact.key, value=fact.value, content=fact.content, importance=fact.importance,
            confidence=fact.confidence, floor_no=turn.floor_no, message_id=turn.message_id,
            message_ids=[turn.message_id],
        ))
        self.matches.append(fact)

    # --- loops

    def add_task(self, task: str, turn: Turn, *, owner: str | None) -> None:
        for ref, content, _floor in self.open:
            if similarity(task, _strip_task_label(content)) >= 0.6:
                loop = next((loop for loop in self.loops if loop.ref == ref), None)
                if loop is not None and turn.message_id not in loop.message_ids:
                    loop.message_ids.append(turn.message_id)
                return
        zh = detect_language(task) == "zh"
        text = task + (f"（{owner}）" if zh else f" ({owner})") if owner else task
        due = due_date(task, (turn.created_at or timezone.now()).date())
        if due is not None:
            text += f"（截止 {due.isoformat()}）" if zh else f" (due {due.isoformat()})"
        content = f"待办：{text}" if zh else f"To do: {text}"
        ref = f"new:{len(self.loops)}"
        importance = DEADLINE_LOOP_IMPORTANCE if has_deadline(task) else LOOP_IMPORTANCE
        self.loops.append(ExtractedLoop(ref=ref, content=content, importance=importance, floor_no=turn.floor_no,
                                        message_id=turn.message_id, message_ids=[turn.message_id],
                                        due_date=due))
        self.open.append((ref, content, turn.floor_no))

    def close(self, closure_terms: list[str], turn: Turn, *, may_close_bare: bool) -> bool:
        if not self.open:
            return False
        closure_stems = term_stems(closure_terms)
        overlaps = [_overlap(closure_stems, loop[1]) for loop in self.open]
        best_overlap = max(overlaps)
        best = self.open[overlaps.index(best_overlap)]
        target = None
        if best_overlap >= RESOLVE_OVERLAP:
            target = best
        elif len(closure_terms) <= 2 and may_close_bare:
            latest = self.open[-1]
            if latest[2] is None or turn.floor_no - latest[2] <= BARE_CLOSURE_WINDOW:
                target = latest
        if target is None:
            return False
        self.open.remove(target)
        self.resolutions.append(Resolution(target=target[0], floor_no=turn.floor_no, message_id=turn.message_id))
        opened = next((loop for loop in self.loops if loop.ref == target[0]), None)
        sources = (*(opened.message_ids if opened else ()), turn.message_id)
        self.done.append(Piece(_strip_task_label(target[1]), tuple(dict.fromkeys(sources))))
        return True


def _user_name(data: ExtractionInput, batch: _Batch) -> str | None:
    for fact in reversed(batch.facts):
        if fact.key == "user.name":
            return fact.value
    for known in reversed(data.known_facts):
        if known.key == "user.name":
            match = _NAME_IN_FACT.match(known.content)
            if match:
                return match.group("name").strip()
    return None


def extract(data: ExtractionInput) -> ExtractionResult:
    turns = prepare_turns(data.turns)
    human = dialog_mode(turns) == HUMAN
    language = conversation_language(data, turns)
    zh_summary = language == "zh"
    batch = _Batch(data)

    for turn in turns:
        # In a dialog of two people both speak of themselves; in an assistant
        # dialog the assistant's statements are advice, not facts about anyone.
        states_facts = human or turn.role == "user"
        subject: Subject = speaker_subject(role=turn.role, speaker=turn.speaker, human=human)
        owner = turn.speaker if human else None
        for sentence, small_talk in turn_sentences(turn.text):
            if small_talk:
                # "Hi, I'm Dana!" greets, and says a name.
                for fact in match_facts(sentence, subject) if states_facts else ():
                    if fact.kind == "name":
                        batch.add_fact(fact, turn, zh=zh_summary)
                continue
            closed, closure_terms = match_closure(sentence)
            if closed and batch.close(closure_terms, turn, may_close_bare=states_facts):
                continue
            if not states_facts:
                continue
            # Someone else's task ("Tom needs to renew his passport by May")
            # is labelled with their name; the speaker's own, as before.
            other = match_other_task(sentence)
            task = None if other else match_task(sentence)
            if other:
                batch.add_task(other[1], turn, owner=other[0])
            elif task:
                batch.add_task(task, turn, owner=owner)
            for fact in match_facts(sentence, subject):
                batch.add_fact(fact, turn, zh=zh_summary)

    # The batch's own view: the latest value per key, tasks opened and still open.
    latest: dict[str, tuple[ExtractedFact, FactMatch]] = {}
    for fact, match in zip(batch.facts, batch.matches, strict=True):
        latest.pop(fact.key, None)
        latest[fact.key] = (fact, match)
    fact_pieces = [Piece(match.render(zh_summary), tuple(fact.message_ids)) for fact, match in latest.values()]
    resolved = {r.target for r in batch.resolutions}
    task_pieces = [Piece(_strip_task_label(loop.content), tuple(loop.message_ids))
                   for loop in batch.loops if loop.ref not in resolved]
    user_name = None if human else _user_name(data, batch)
    # Scored once for both summaries; each leaves out what its facts and tasks say.
    scored = context_sentences(turns, language, human=human, user_name=user_name)
    micro = summarize_turns(turns, language, facts=fact_pieces, tasks=task_pieces, done=batch.done, human=human,
                            user_name=user_name, scored=scored)
    floor_of = {t.message_id: t.floor_no for t in data.turns}
    summary_sources = sorted(set(micro.sources), key=lambda mid: floor_of.get(mid, 0))

    rolling, rolling_sources = _rolling_summary(data, language, scored, latest, batch)
    return ExtractionResult(
        language=language, summary=micro.text, rolling_summary=rolling, facts=batch.facts,
        open_loops=batch.loops, resolutions=batch.resolutions, summary_sources=summary_sources,
        rolling_sources=rolling_sources,
    )


def _rolling_summary(
    data: ExtractionInput,
    language: str,
    candidates: list[Candidate],
    latest: dict[str, tuple[ExtractedFact, FactMatch]],
    batch: _Batch,
) -> tuple[str, list[str]]:
    """The conversation's summary after this batch: current facts (a newer value
    replaces the old), tasks still open, and context carried over from the
    previous summary with this batch's context added; and the messages it
    draws on (the previous summary's, and this batch's that it kept)."""
    zh = language == "zh"
    known = {k.key: k.content for k in data.known_facts}
    # Newest-stated facts first so that they survive the length cap; a value
    # that replaced another says so (a change of mind is part of the story),
    # and keeps saying so in the summaries after.
    before = dict(known)
    for fact in batch.facts:  # in the order said: what each key held before its latest value
        if fact is not latest[fact.key][0]:
            before[fact.key] = fact.content
    facts: list[Piece] = [Piece(_changed(match.render(zh), before.get(key), zh), tuple(fact.message_ids))
                          for key, (fact, match) in reversed(latest.items())]
    noted = {item.split(CHANGE_NOTES[zh])[0]: item for item in parse_sections(data.previous_summary)["facts"]
             if CHANGE_NOTES[zh] in item}
    facts += [Piece(noted.get(k.content, k.content)) for k in reversed(data.known_facts) if k.key not in latest]
    loop_sources = {loop.ref: tuple(loop.message_ids) for loop in batch.loops}
    tasks = [Piece(_strip_task_label(text), loop_sources.get(ref, ())) for ref, text, _ in reversed(batch.open)]
    previous = parse_sections(data.previous_summary)
    excluded = [p.text for p in [*facts, *tasks, *batch.done]]
    scored = without(candidates, excluded)
    best = sorted(range(len(scored)), key=lambda i: scored[i].score, reverse=True)[:ROLLING_BATCH_CONTEXT]
    # Context from before a switch of language is left out: the summary is
    # written in the language the conversation now uses.
    carried = [c for c in previous["context"] if detect_language(split_label(c)[1]) == language]
    context = [Piece(c, (), 100.0 + len(carried) - i) for i, c in enumerate(carried)]
    context += [Piece(scored[i].text, tuple(scored[i].sources), rank) for rank, i in
                enumerate(best)]
    # Written in conversation order: carried context first, then this batch's.
    context = context[:len(carried)] + sorted(context[len(carried):], key=lambda p: _order(p, scored))
    # Context that still says a replaced value would contradict the facts.
    stale = [(fact_value(known[key]) or "", fact.value) for key, (fact, _) in latest.items()
             if key in known and known[key] != fact.content]
    stale += [(f.value, latest[f.key][0].value) for f in batch.facts if f.key in latest and f is not latest[f.key][0]]
    context = drop_stale(context, stale)
    composed = compose(language, facts=facts, tasks=tasks, done=batch.done[-2:], context=context,
                       shares=ROLLING_SHARES)
    floor_of = {t.message_id: t.floor_no for t in data.turns}
    new = sorted((s for s in composed.sources if s in floor_of), key=lambda mid: floor_of[mid])
    return composed.text, list(dict.fromkeys([*data.previous_summary_sources, *new]))


CHANGE_NOTES = {False: " (changed from ", True: "（原为"}


def _changed(text: str, before: str | None, zh: bool) -> str:
    """`text`, with the value it replaced: "User prefers window seats (changed
    from aisle seats)"."""
    old = fact_value(before) if before and before != text else None
    if not old or old.lower() in text.lower():
        return text
    return f"{text}{CHANGE_NOTES[zh]}{old}" + ("）" if zh else ")")


def _order(piece: Piece, scored) -> int:
    return next((c.order for c in scored if c.text == piece.text), 0)


def compact(summaries: list[str]) -> str:
    """A macro summary merging micro summaries (oldest first)."""
    return merge_summaries(summaries)
