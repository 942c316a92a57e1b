"""Anthropic's Messages API, asked for a JSON object."""

from __future__ import annotations

from typing import Any

import anthropic
from django.conf import settings

from memories.extraction.types import Usage
from memories.llm.base import ChatProvider, LLMError

_MAX_OUTPUT_TOKENS = 1500


class AnthropicProvider(ChatProvider):
    name = "anthropic"

    def __init__(self, *, model: str, api_key: str = "", base_url: str | None = None, timeout: float = 60.0,
                 max_retries: int = 4, http_client: Any = None) -> None:
        if not model:
            raise LLMError("LLM_MODEL must be set for the anthropic provider.")
        self.model = model
        self.max_retries = max_retries
        # The SDK's own retries are off: ours are counted, capped and backed off
        # the same way for every provider.
        kwargs: dict[str, Any] = {"api_key": api_key or "not-set", "timeout": timeout, "max_retries": 0}
        if base_url:
            kwargs["base_url"] = base_url
        if http_client is not None:
            kwargs["http_client"] = http_client
        self.client = anthropic.Anthropic(**kwargs)

    @classmethod
    def from_settings(cls) -> AnthropicProvider:
        return cls(model=settings.LLM_MODEL, api_key=settings.LLM_API_KEY, base_url=settings.LLM_BASE_URL or None,
                   timeout=settings.LLM_TIMEOUT_SECONDS, max_retries=settings.LLM_MAX_RETRIES)

    def _is_transient(self, exc: Exception) -> bool:
        if isinstance(exc, anthropic.APIConnectionError):  # includes timeouts
            return True
        if isinstance(exc, anthropic.APIStatusError):
            return exc.status_code in (408, 409, 429, 529) or exc.status_code >= 500
        return False

    def _complete(self, system: str, user: str) -> tuple[str, Usage]:
        try:
            message = self.client.messages.create(
                model=self.model,
                max_tokens=_MAX_OUTPUT_TOKENS,
                # The system prompt is the same on every call: marked as the
                # prefix to cache.
                system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
                messages=[{"role": "user", "content": user}],
            )
        except anthropic.APIStatusError as exc:
            if self._is_transient(exc):
                raise
            raise LLMError(f"anthropic: HTTP {exc.status_code}: {exc.message}") from exc
        text = "".join(getattr(block, "text", "") for block in message.content if getattr(block, "type", "") == "text")
        # Anthropic counts cache reads and writes apart from `input_tokens`:
        # the prompt's size is their sum.
        cached = getattr(message.usage, "cache_read_input_tokens", 0) or 0
        written = getattr(message.usage, "cache_creation_input_tokens", 0) or 0
        usage = Usage(input_tokens=(message.usage.input_tokens or 0) + cached + written,
                      output_tokens=message.usage.output_tokens or 0, cached_tokens=cached)
        return text, usage
