"""Helpers for the pipeline tests: eager Celery, the conversation fixtures."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from memory_project.celery import app as celery_app

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "conversations"


def load_fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


@contextlib.contextmanager
def eager_celery():
    """Tasks run in-process when dispatched (after commit)."""
    old = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = old


def _llm_double():
    """bench/llm_double.py: the scripted model that answers a prompt with the
    offline extractor's reading of it."""
    import importlib.util
    import sys

    name = "bench_llm_double"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, FIXTURES.parents[2] / "bench" / "llm_double.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


class ScriptedModel:
    """An OpenAI-compatible endpoint at the HTTP boundary (a mock transport,
    no network) answered by the scripted model; keeps every request."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.on_request = None  # called with each request, before it is answered

    def __call__(self, request):
        import httpx

        from memories.llm.tokens import count_tokens

        body = json.loads(request.content)
        self.requests.append(body)
        if self.on_request is not None:
            self.on_request()
        system = next(m["content"] for m in body["messages"] if m["role"] == "system")
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        text = _llm_double().answer(system, user)
        return httpx.Response(200, json={
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 1, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": count_tokens(system) + count_tokens(user), "completion_tokens": count_tokens(text),
                      "prompt_tokens_details": {"cached_tokens": count_tokens(system) if len(self.requests) > 1 else 0}},
        })

    def provider(self):
        import httpx

        from memories.llm.openai_provider import OpenAIProvider

        return OpenAIProvider(model="scripted", api_key="k", base_url="http://llm.test/v1", max_retries=0,
                              http_client=httpx.Client(transport=httpx.MockTransport(self)))
