"""The offline provider: the rule-based extractor, no network. Usage is still
counted in real tokens (what the same text would cost a hosted model)."""

from __future__ import annotations

import time

import memories.extraction.extractor as extractor
from memories.extraction.types import ExtractionInput, ExtractionResult, Usage
from memories.llm.base import LLMProvider
from memories.llm.tokens import count_tokens


class OfflineProvider(LLMProvider):
    name = "offline"

    def __init__(self, *, delay_seconds: float = 0.0) -> None:
        # A per-batch pause, for exercising a worker killed mid-job; with one,
        # batches commit one by one as a network model's do.
        self.delay_seconds = delay_seconds
        self.in_process = not delay_seconds

    def extract(self, data: ExtractionInput) -> tuple[ExtractionResult, Usage]:
        if self.delay_seconds:
            time.sleep(self.delay_seconds)
        result = extractor.extract(data)
        input_tokens = sum(count_tokens(t.text) for t in data.turns) + count_tokens(data.previous_summary)
        output_tokens = count_tokens(result.summary) + count_tokens(result.rolling_summary)
        output_tokens += sum(count_tokens(f.content) for f in result.facts)
        output_tokens += sum(count_tokens(loop.content) for loop in result.open_loops)
        return result, Usage(input_tokens=input_tokens, output_tokens=output_tokens)

    def compact(self, summaries: list[str]) -> tuple[str, Usage]:
        text = extractor.compact(summaries)
        return text, Usage(input_tokens=sum(count_tokens(s) for s in summaries), output_tokens=count_tokens(text))
