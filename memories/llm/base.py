"""The provider interface, the structured-output schema and the retry policy
shared by the network providers."""

from __future__ import annotations

import json
import random
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import date
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError, field_validator

from memories.extraction.dates import due_date
from memories.extraction.dialog import prepare_turns
from memories.extraction.summarizer.sections import SUMMARY_MAX_CHARS
from memories.extraction.text import clip, detect_language, repair_literals
from memories.extraction.types import (
    ExtractedFact,
    ExtractedLoop,
    ExtractionInput,
    ExtractionResult,
    Resolution,
    Usage,
)
from memories.llm.prompts import (
    COMPACT_SYSTEM,
    compaction_user,
    correction,
    extract_system,
    extraction_user,
    task_alias,
)

T = TypeVar("T")

# Backoff for transient errors: 0.5 s doubling to 8 s, with jitter so that
# several workers hitting one rate limit do not retry in lockstep.
BACKOFF_BASE_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 8.0
# Output that fails the schema is asked for again this many times with the
# validation error attached; after that the job fails with that error.
SCHEMA_RETRIES = 2


class LLMError(Exception):
    """A provider failure that retrying will not fix (bad key, bad model, bad output)."""


class LLMTransientError(LLMError):
    """Rate limit, timeout, connection or 5xx: still failing after the retries."""


class LLMOutputError(LLMError):
    """The model's output did not match the schema, even after asking again."""


class LLMProvider(ABC):
    name: str = "base"
    # A provider that answers in-process, quickly and without network (the
    # offline extractor): the pipeline may call it inside its write
    # transaction, several batches to a commit. A model behind a network
    # call never is (it may take seconds).
    in_process: bool = False

    @abstractmethod
    def extract(self, data: ExtractionInput) -> tuple[ExtractionResult, Usage]:
        """Summary, facts, open loops and resolutions for one batch of turns."""

    @abstractmethod
    def compact(self, summaries: list[str]) -> tuple[str, Usage]:
        """One macro summary from micro summaries, oldest first."""


# --- Structured output ---------------------------------------------------------


class _Sourced(BaseModel):
    floor_no: int = Field(description="The floor the item mainly comes from.")
    source_floors: list[int] = Field(
        default_factory=list, max_length=50,
        description="Every floor the item was made from (floor_no included).",
    )

    def floors(self) -> list[int]:
        return list(dict.fromkeys([self.floor_no, *self.source_floors]))


class FactOut(_Sourced):
    key: str = Field(min_length=1, max_length=255)
    value: str = Field(min_length=1, max_length=2000)
    content: str = Field(min_length=1, max_length=2000)
    importance: float = Field(default=0.6, ge=0, le=1)
    confidence: float = Field(default=0.8, ge=0, le=1)

    @field_validator("key")
    @classmethod
    def normalize_key(cls, value: str) -> str:
        key = re.sub(r"\s+", "_", value.strip().lower())
        if not key:
            raise ValueError("empty key")
        return key


class LoopOut(_Sourced):
    content: str = Field(min_length=1, max_length=2000)
    importance: float = Field(default=0.7, ge=0, le=1)


class ResolutionOut(BaseModel):
    target: str = Field(min_length=1)
    floor_no: int


class ExtractionOut(BaseModel):
    # Empty when the new turns hold nothing worth keeping (small talk): a
    # model asked to write something anyway invents, or is asked again.
    summary: str = Field(default="", max_length=4000)
    summary_floors: list[int] = Field(
        default_factory=list, max_length=500,
        description="The floors whose text the summary says something of.",
    )
    rolling_summary: str = Field(default="", max_length=4000)  # empty: the summary so far stands
    facts: list[FactOut] = Field(default_factory=list, max_length=200)
    open_loops: list[LoopOut] = Field(default_factory=list, max_length=100)
    resolutions: list[ResolutionOut] = Field(default_factory=list, max_length=100)


class CompactionOut(BaseModel):
    summary: str = Field(min_length=1, max_length=4000)


def parse_json_object(text: str) -> Any:
    """The JSON object in a model's reply (code fences and chatter around it tolerated)."""
    text = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fenced:
        text = fenced.group(1).strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the reply")
    return json.loads(text[start : end + 1])


def to_result(out: ExtractionOut, data: ExtractionInput) -> ExtractionResult:
    """Check the output against the batch (floors, loop ids) and convert it:
    floors become message ids, e-mails, URLs and numbers the model spaced out
    are restored as the turns wrote them."""
    by_floor = {t.floor_no: t.message_id for t in data.turns}
    # A deadline in a task ("by Friday") counts from the day its turn was said (today when unknown).
    said_on = {t.floor_no: t.created_at.date() for t in data.turns if t.created_at is not None}
    known_loops = {loop.id for loop in data.open_loops}
    # The prompt names open tasks T1, T2 ...; a model that answers with the id itself is understood too.
    aliases = {task_alias(i): loop.id for i, loop in enumerate(data.open_loops)}
    for resolution in out.resolutions:
        resolution.target = aliases.get(resolution.target.strip(), resolution.target.strip())
    problems: list[str] = []
    items: list[tuple[str, list[int]]] = [(f"fact {i}", f.floors()) for i, f in enumerate(out.facts)]
    items += [(f"open loop {i}", loop.floors()) for i, loop in enumerate(out.open_loops)]
    items += [(f"resolution {i}", [r.floor_no]) for i, r in enumerate(out.resolutions)]
    items += [("summary_floors", out.summary_floors)]
    for name, floors in items:
        unknown = [floor for floor in floors if floor not in by_floor]
        if unknown:
            problems.append(f"{name}: floor {unknown[0]} is not one of {sorted(by_floor)}")
    new_refs = {f"new:{i}" for i in range(len(out.open_loops))}
    for resolution in out.resolutions:
        if resolution.target not in known_loops | new_refs:
            problems.append(f"resolution target '{resolution.target}' is neither an open loop id nor new:<n>")
    if problems:
        raise ValueError("; ".join(problems[:5]))
    turns = prepare_turns(data.turns)
    source = "\n".join([data.previous_summary, *(t.text for t in data.turns)])
    language = detect_language(" ".join(t.text for t in turns[-20:]) or data.previous_summary)

    def ids(floors: list[int]) -> list[str]:
        return [by_floor[floor] for floor in sorted(set(floors))]

    def exact(text: str) -> str:
        return repair_literals(text, source)

    facts = [
        ExtractedFact(key=f.key, value=exact(f.value), content=exact(f.content), importance=f.importance,
                      confidence=f.confidence, floor_no=f.floor_no, message_id=by_floor[f.floor_no],
                      message_ids=[by_floor[f.floor_no], *(m for m in ids(f.floors()) if m != by_floor[f.floor_no])])
        for f in out.facts
    ]
    loops = [
        ExtractedLoop(ref=f"new:{i}", content=exact(loop.content), importance=loop.importance,
                      floor_no=loop.floor_no, message_id=by_floor[loop.floor_no],
                      message_ids=[by_floor[loop.floor_no],
                                   *(m for m in ids(loop.floors()) if m != by_floor[loop.floor_no])],
                      due_date=due_date(loop.content, said_on.get(loop.floor_no) or date.today()))
        for i, loop in enumerate(out.open_loops)
    ]
    # A model that names no floors for its summary is credited with every
    # conversation turn of the batch: an over-approximation, never "the last one".
    summary_floors = out.summary_floors or [t.floor_no for t in turns]
    summary_sources = ids([*summary_floors, *(n for f in out.facts for n in f.floors()),
                           *(n for loop in out.open_loops for n in loop.floors()),
                           *(r.floor_no for r in out.resolutions)])
    return ExtractionResult(
        language=language,
        summary=clip(exact(out.summary), SUMMARY_MAX_CHARS),
        rolling_summary=clip(exact(out.rolling_summary), SUMMARY_MAX_CHARS) if out.rolling_summary.strip()
        else data.previous_summary,
        facts=facts,
        open_loops=loops,
        resolutions=[
            Resolution(target=r.target, floor_no=r.floor_no, message_id=by_floor[r.floor_no]) for r in out.resolutions
        ],
        summary_sources=summary_sources,
        rolling_sources=list(dict.fromkeys([*data.previous_summary_sources, *summary_sources])),
    )


# --- Retries -------------------------------------------------------------------


def with_retries(
    call: Callable[[], T],
    *,
    is_transient: Callable[[Exception], bool],
    max_retries: int,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run `call`, retrying transient failures up to `max_retries` times (<= 5)
    with exponential backoff; a permanent failure is raised at once."""
    max_retries = max(0, min(max_retries, 5))
    attempt = 0
    while True:
        try:
            return call()
        except Exception as exc:
            if not is_transient(exc):
                raise
            if attempt >= max_retries:
                raise LLMTransientError(f"{exc.__class__.__name__} after {attempt + 1} attempts: {exc}") from exc
            delay = min(BACKOFF_BASE_SECONDS * 2**attempt, BACKOFF_MAX_SECONDS)
            sleep(delay * (0.5 + random.random() / 2))
            attempt += 1


class ChatProvider(LLMProvider):
    """A provider that sends one system + one user message and reads JSON back."""

    max_retries: int = 4
    sleep: Callable[[float], None] = staticmethod(time.sleep)

    @abstractmethod
    def _complete(self, system: str, user: str) -> tuple[str, Usage]:
        """One request: the reply's text and its token usage."""

    @abstractmethod
    def _is_transient(self, exc: Exception) -> bool: ...

    def _structured(self, system: str, user: str, parse: Callable[[Any], T]) -> tuple[T, Usage]:
        usage = Usage()
        last_error = ""
        prompt = user
        for _ in range(SCHEMA_RETRIES + 1):
            text, used = with_retries(
                lambda p=prompt: self._complete(system, p),
                is_transient=self._is_transient,
                max_retries=self.max_retries,
                sleep=self.sleep,
            )
            used.calls = 1
            usage.add(used)
            try:
                return parse(parse_json_object(text)), usage
            except (ValueError, ValidationError) as exc:
                last_error = str(exc)[:1000]
                prompt = correction(user, text, last_error)
        raise LLMOutputError(f"{self.name}: output did not match the schema after {SCHEMA_RETRIES + 1} attempts: {last_error}")

    def extract(self, data: ExtractionInput) -> tuple[ExtractionResult, Usage]:
        return self._structured(
            extract_system(),
            extraction_user(data),
            lambda obj: to_result(ExtractionOut.model_validate(obj), data),
        )

    def compact(self, summaries: list[str]) -> tuple[str, Usage]:
        text, usage = self._structured(
            COMPACT_SYSTEM,
            compaction_user(summaries),
            lambda obj: CompactionOut.model_validate(obj).summary,
        )
        return clip(repair_literals(text, "\n".join(summaries)), SUMMARY_MAX_CHARS), usage

