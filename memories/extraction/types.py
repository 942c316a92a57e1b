"""The data the pipeline hands a language-model provider and gets back.

Plain dataclasses: the offline extractor and the network providers fill the
same shapes, and the pipeline writes them without knowing which one ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Turn:
    floor_no: int
    message_id: str
    role: str
    text: str


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


@dataclass
class ExtractedFact:
    key: str
    value: str
    content: str
    importance: float
    confidence: float
    floor_no: int
    message_id: str


@dataclass
class ExtractedLoop:
    ref: str  # "new:<n>", so a closure in the same batch can point at it
    content: str
    importance: float
    floor_no: int
    message_id: str


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


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
