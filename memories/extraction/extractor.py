"""The offline extractor: one batch of turns in, a micro summary, facts, open
loops, resolutions and the next rolling summary out. No network, deterministic.
"""

from __future__ import annotations

from memories.extraction.patterns import match_closure, match_facts, match_task
from memories.extraction.summarizer import compose, context_sentences, parse_sections, summarize_turns
from memories.extraction.text import detect_language, is_small_talk, similarity, split_sentences, terms
from memories.extraction.types import (
    ExtractedFact,
    ExtractedLoop,
    ExtractionInput,
    ExtractionResult,
    Resolution,
)

# A closure matches an open loop when they share this much of the smaller term
# set ("I renewed my passport" vs "renew passport before June" share "passport").
RESOLVE_OVERLAP = 0.3
# A bare "done!" / "搞定了" closes the most recent loop only if it was opened
# within this many floors: further back, "done" is more likely about something else.
BARE_CLOSURE_WINDOW = 6


def _overlap(a: list[str], b: str) -> float:
    ta, tb = set(a), set(terms(_strip_task_label(b)))
    if not ta or not tb:
        return 0.0
    stems_a = {t[:5] for t in ta if t.isascii()} | {t for t in ta if not t.isascii()}
    stems_b = {t[:5] for t in tb if t.isascii()} | {t for t in tb if not t.isascii()}
    return len(stems_a & stems_b) / min(len(stems_a), len(stems_b))


def conversation_language(data: ExtractionInput) -> str:
    """The language of the latest turns (the summary rule: write as the conversation does)."""
    recent = [t.text for t in data.turns if t.role in {"user", "assistant"}][-20:]
    text = " ".join(recent) or data.previous_summary
    return detect_language(text)


def extract(data: ExtractionInput) -> ExtractionResult:
    language = conversation_language(data)
    facts: list[ExtractedFact] = []
    loops: list[ExtractedLoop] = []
    resolutions: list[Resolution] = []
    open_loops: list[tuple[str, str, int | None]] = [(o.id, o.content, o.floor_no) for o in data.open_loops]
    resolved_texts: list[str] = []

    for turn in data.turns:
        if turn.role not in {"user", "assistant"}:
            continue  # tool calls and results, and system prompts, are not conversation content
        for sentence in split_sentences(turn.text):
            if is_small_talk(sentence):
                continue
            closed, closure_terms = match_closure(sentence)
            if closed and open_loops:
                best = max(open_loops, key=lambda loop: _overlap(closure_terms, loop[1]))
                score = _overlap(closure_terms, best[1])
                target = None
                if score >= RESOLVE_OVERLAP:
                    target = best
                elif len(closure_terms) <= 2 and turn.role == "user":
                    latest = open_loops[-1]
                    if latest[2] is None or turn.floor_no - latest[2] <= BARE_CLOSURE_WINDOW:
                        target = latest
                if target is not None:
                    open_loops.remove(target)
                    resolutions.append(Resolution(target=target[0], floor_no=turn.floor_no, message_id=turn.message_id))
                    resolved_texts.append(target[1])
                    continue
            if turn.role != "user":
                continue
            task = match_task(sentence)
            if task and not any(similarity(task, loop[1]) >= 0.6 for loop in open_loops):
                zh = detect_language(sentence) == "zh"
                ref = f"new:{len(loops)}"
                content = f"待办：{task}" if zh else f"To do: {task}"
                loops.append(ExtractedLoop(ref=ref, content=content, importance=0.75, floor_no=turn.floor_no,
                                           message_id=turn.message_id))
                open_loops.append((ref, content, turn.floor_no))
                continue
            for fact in match_facts(sentence):
                if facts and facts[-1].key == fact.key and facts[-1].value == fact.value:
                    continue
                facts.append(ExtractedFact(key=fact.key, value=fact.value, content=fact.content,
                                           importance=fact.importance, confidence=fact.confidence,
                                           floor_no=turn.floor_no, message_id=turn.message_id))

    # The batch's own view: the latest value per key, tasks opened and still open.
    latest_by_key: dict[str, str] = {}
    for fact in facts:
        latest_by_key[fact.key] = fact.content
    batch_facts = list(latest_by_key.values())
    resolved_refs = {r.target for r in resolutions}
    batch_tasks = [_strip_task_label(loop.content) for loop in loops if loop.ref not in resolved_refs]
    batch_done = [_strip_task_label(text) for text in resolved_texts]
    summary = summarize_turns(data.turns, language, facts=batch_facts, tasks=batch_tasks, done=batch_done)

    rolling = _rolling_summary(data, language, facts, latest_by_key, open_loops, batch_done)
    return ExtractionResult(language=language, summary=summary, rolling_summary=rolling, facts=facts,
                            open_loops=loops, resolutions=resolutions)


def _strip_task_label(text: str) -> str:
    for label in ("To do: ", "待办："):
        if text.startswith(label):
            return text[len(label):]
    return text


def _rolling_summary(
    data: ExtractionInput,
    language: str,
    facts: list[ExtractedFact],
    latest_by_key: dict[str, str],
    open_loops: list[tuple[str, str, int | None]],
    done: list[str],
) -> str:
    """The conversation's summary after this batch: current facts (a newer value
    replaces the old), tasks still open, and context carried over from the
    previous summary with this batch's context added (newest kept first)."""
    current: dict[str, str] = {fact.key: fact.content for fact in data.known_facts}
    current.update(latest_by_key)
    # Newest-stated facts first so that they survive the length cap.
    order = [f.key for f in reversed(facts)] + [f.key for f in data.known_facts]
    seen: set[str] = set()
    fact_texts: list[str] = []
    for key in order:
        if key in current and key not in seen:
            seen.add(key)
            fact_texts.append(current[key])
    tasks = [_strip_task_label(text) for _, text, _ in reversed(open_loops)]
    previous = parse_sections(data.previous_summary)
    scored = context_sentences(data.turns, language, exclude=[*fact_texts, *tasks, *done])
    best = sorted(range(len(scored)), key=lambda i: scored[i][0], reverse=True)[:4]
    # Context from before a switch of language is left out: the summary is
    # written in the language the conversation now uses.
    carried = [s for s in previous["context"] if detect_language(s) == language]
    context = carried + [scored[i][1] for i in sorted(best)]
    return compose(language, facts=fact_texts, tasks=tasks, done=done[-2:], context=context)


def compact(summaries: list[str]) -> str:
    """A macro summary merging micro summaries (oldest first)."""
    from memories.extraction.summarizer import merge_summaries

    return merge_summaries(summaries)
