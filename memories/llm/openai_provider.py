"""Any OpenAI-compatible chat-completions endpoint, asked for a JSON object."""

from __future__ import annotations

from typing import Any

import openai
from django.conf import settings

from memories.extraction.types import Usage
from memories.llm.base import ChatProvider, LLMError

_MAX_OUTPUT_TOKENS = 1500


class OpenAIProvider(ChatProvider):
    name = "openai"

    def __init__(self, *, model: str, api_key: str = "", base_url: str | None = None, timeout: float = 60.0,
                 max_retries: int = 4, http_client: Any = None) -> None:
        if not model:
            raise LLMError("LLM_MODEL must be set for the openai provider.")
        self.model = model
        self.max_retries = max_retries
        # The SDK's own retries are off: ours are counted, capped and backed off
        # the same way for every provider.
        self.client = openai.OpenAI(
            api_key=api_key or "not-needed",
            base_url=base_url or None,
            timeout=timeout,
            max_retries=0,
            http_client=http_client,
        )

    @classmethod
    def from_settings(cls) -> OpenAIProvider:
        return cls(model=settings.LLM_MODEL, api_key=settings.LLM_API_KEY, base_url=settings.LLM_BASE_URL or None,
                   timeout=settings.LLM_TIMEOUT_SECONDS, max_retries=settings.LLM_MAX_RETRIES)

    def _is_transient(self, exc: Exception) -> bool:
        if isinstance(exc, openai.APIConnectionError):  # includes timeouts
            return True
        if isinstance(exc, openai.APIStatusError):
            return exc.status_code in (408, 409, 429) or exc.status_code >= 500
        return False

    def _complete(self, system: str, user: str) -> tuple[str, Usage]:
        try:
            response = self.client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={"type": "json_object"},
                temperature=0,
                max_tokens=_MAX_OUTPUT_TOKENS,
            )
        except openai.APIStatusError as exc:
            if self._is_transient(exc):
                raise
            raise LLMError(f"openai: HTTP {exc.status_code}: {exc.message}") from exc
        text = response.choices[0].message.content or "" if response.choices else ""
        usage = Usage()
        if response.usage is not None:
            details = getattr(response.usage, "prompt_tokens_details", None)
            usage = Usage(input_tokens=response.usage.prompt_tokens or 0,
                          output_tokens=response.usage.completion_tokens or 0,
                          cached_tokens=(getattr(details, "cached_tokens", 0) or 0) if details else 0)
        return text, usage
