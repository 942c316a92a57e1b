"""The data the pipeline hands a language-model provider and gets back.

Plain dataclasses: the offline extractor and the network providers fill the
same shapes, and the pipeline writes them without knowing which one ran.
Every field added after the first release has a default, so that callers
written against the older shapes keep working.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime


@dataclass(frozen=True)
class Turn:
    floor_no: int
    message_id: str
    role: str
    text: str
    created_at: datetime | None = None
    # Who spoke and when, as a chat client wrote it in front of the text
    # ("[7:31 pm] Nate: ..."): filled by the extractor from the prefix, which
    # it strips from `text` before anything is scored.
    speaker: str | None = None
    time_text: str | None = None


@dataclass(frozen=True)
class KnownFact:
    id: str
    key: str
    content: str


@dataclass(frozen=True)
class OpenLoopRef:
    id: str
    content: str
    floor_no: int | None = None


@dataclass
class ExtractionInput:
    previous_summary: str
    known_facts: list[KnownFact]
    open_loops: list[OpenLoopRef]
    turns: list[Turn]
    # The message ids the previous rolling summary was made from: carried into
    # the next one's sources.
    previous_summary_sources: list[str] = field(default_factory=list)


@dataclass
class ExtractedFact:
    key: str
    value: str
    content: str
    importance: float
    confidence: float
    floor_no: int  # the primary source
    message_id: str
    # Every message the fact was made from (the primary one first).
    message_ids: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.message_ids:
            self.message_ids = [self.message_id]


@dataclass
class ExtractedLoop:
    ref: str  # "new:<n>", so a closure in the same batch can point at it
    content: str
    importance: float
    floor_no: int  # the primary source
    message_id: str
    message_ids: list[str] = field(default_factory=list)

    due_date: date | None = None  # the day the task is due, when it names one

    def __post_init__(self) -> None:
        if not self.message_ids:
            self.message_ids = [self.message_id]


@dataclass
class Resolution:
    target: str  # an existing open loop's id, or a new loop's ref
    floor_no: int
    message_id: str


@dataclass
class ExtractionResult:
    language: str
    summary: str  # the micro summary of these turns
    rolling_summary: str  # the conversation's summary after these turns
    facts: list[ExtractedFact] = field(default_factory=list)
    open_loops: list[ExtractedLoop] = field(default_factory=list)
    resolutions: list[Resolution] = field(default_factory=list)
    # The batch's messages the micro summary was made from (conversation order).
    summary_sources: list[str] = field(default_factory=list)
    # The messages the rolling summary draws on: this batch's contributions and
    # those carried from the previous rolling summary.
    rolling_sources: list[str] = field(default_factory=list)


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    # Of `input_tokens`, those the provider read from its prompt cache (where
    # it says so): the stable system prompt, mostly.
    cached_tokens: int = 0
    # Requests sent to a network model (0 for the in-process extractor).
    calls: int = 0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cached_tokens += other.cached_tokens
