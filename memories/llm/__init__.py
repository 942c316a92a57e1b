"""Language-model providers for the memory pipeline.

`get_provider()` returns the one chosen by `LLM_PROVIDER`: `offline` (the
default: rule-based, no network), `openai` (any OpenAI-compatible endpoint) or
`anthropic`.
"""

from __future__ import annotations

from django.conf import settings

from memories.llm.anthropic_provider import AnthropicProvider
from memories.llm.base import LLMError, LLMOutputError, LLMProvider, LLMTransientError
from memories.llm.offline import OfflineProvider
from memories.llm.openai_provider import OpenAIProvider

__all__ = ["LLMError", "LLMOutputError", "LLMProvider", "LLMTransientError", "get_provider"]


def get_provider(name: str | None = None) -> LLMProvider:
    name = (name or settings.LLM_PROVIDER or "offline").lower()
    if name == "offline":

        return OfflineProvider(delay_seconds=getattr(settings, "LLM_OFFLINE_DELAY_SECONDS", 0.0))
    if name == "openai":

        return OpenAIProvider.from_settings()
    if name == "anthropic":

        return AnthropicProvider.from_settings()
    raise LLMError(f"Unknown LLM_PROVIDER '{name}': use offline, openai or anthropic.")
