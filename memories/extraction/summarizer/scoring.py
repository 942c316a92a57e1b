"""Which sentences of a conversation are worth keeping: a score per sentence
and the candidates for a summary's context."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memories.extraction.summarizer.sections import ECHO_RE, LABELS, LITERAL_HINT, MID_NAME_RE, NUMBER_RE, OWN_NEWS_RE
from memories.extraction.text import (
    covered,
    detect_language,
    similarity,
    terms,
    turn_sentences,
)
from memories.extraction.types import Turn


def score_sentence(sentence: str, *, role: str, human: bool, position: float,
                   content: list[str] | None = None) -> float:
    """How much a sentence is worth keeping. No role weighs less in a dialog of
    two people; in an assistant dialog the assistant's echoes and offers do.
    `content`: the sentence's `terms`, when the caller has them already."""
    content = terms(sentence) if content is None else content
    score = 1.0 if (human or role == "user") else 0.85
    score += min(len(content), 10) * 0.06
    if len(content) < 3:
        score -= 0.4
    if len(sentence) > 240:
        score -= 0.3
    if NUMBER_RE.search(sentence):
        score += 0.25
    if LITERAL_HINT.search(sentence):
        score += 0.2
    names = len(MID_NAME_RE.findall(sentence))
    score += 0.2 if names == 1 else 0.3 if names > 1 else 0.0
    if OWN_NEWS_RE.search(sentence) and (human or role == "user"):
        score += 0.15
    if sentence.rstrip().endswith(("?", "？")):
        score -= 0.1 if (role == "user" and not human) else 0.35
    if not human and role == "assistant" and ECHO_RE.match(sentence):
        score -= 0.25
    return score + 0.25 * position  # later turns carry the current state


@dataclass
class Candidate:
    score: float
    label: str
    sentence: str
    sources: list[str]
    order: int

    @property
    def text(self) -> str:
        return f"{self.label}: {self.sentence}"


def speaker_label(turn: Turn, language: str, user_name: str | None = None) -> str:
    if turn.speaker:
        return turn.speaker
    if turn.role == "user" and user_name:
        return user_name
    return LABELS[language]["user" if turn.role == "user" else "assistant"]


def context_sentences(
    turns: Iterable[Turn], language: str, exclude: Iterable[str] = (), *, human: bool = False,
    user_name: str | None = None,
) -> list[Candidate]:
    """Scored context sentences with their speakers and messages: small talk,
    tool output and repetition removed, sentences in another language than
    `language` demoted. The turns are the batch's conversation turns, client
    prefixes already stripped."""
    turns = [t for t in turns if t.role in {"user", "assistant"}]
    # A sentence the facts and tasks already say (together) is repetition.
    excluded = " ".join(exclude)
    chosen: list[Candidate] = []
    for index, turn in enumerate(turns):
        position = index / max(len(turns) - 1, 1)
        label = speaker_label(turn, language, user_name)
        for sentence, small_talk in turn_sentences(turn.text):
            if small_talk:
                continue
            content = terms(sentence)
            if len(content) < 2:
                continue
            if excluded and covered(sentence, excluded) >= 0.6:
                continue
            score = score_sentence(sentence, role=turn.role, human=human, position=position, content=content)
            if detect_language(sentence) != language:
                score *= 0.3
            duplicate = next((c for c in chosen if similarity(sentence, c.sentence) >= 0.6), None)
            if duplicate is not None:
                # Repetition: keep one copy, the later wording, made from both messages.
                duplicate.score = max(score, duplicate.score)
                duplicate.sentence, duplicate.label, duplicate.order = sentence, label, len(chosen) + index * 1000
                if turn.message_id not in duplicate.sources:
                    duplicate.sources.append(turn.message_id)
                continue
            chosen.append(Candidate(score, label, sentence, [turn.message_id], index * 1000 + len(chosen)))
    chosen.sort(key=lambda c: c.order)
    return chosen


def without(candidates: list[Candidate], exclude: Iterable[str]) -> list[Candidate]:
    """The candidates that the excluded texts (facts, tasks) do not already say."""
    excluded = " ".join(exclude)
    if not excluded:
        return list(candidates)
    return [c for c in candidates if covered(c.sentence, excluded) < 0.6]
