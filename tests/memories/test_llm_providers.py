"""The network providers at the HTTP boundary of the `openai` and `anthropic`
packages (mock transports, no network): retries on 429/500, schema-invalid
output asked again then failed clearly, usage recorded."""

from __future__ import annotations

import json

import httpx
import httpx2
import pytest

from memories.extraction.types import ExtractionInput, OpenLoopRef, Turn
from memories.llm.anthropic_provider import AnthropicProvider
from memories.llm.base import LLMError, LLMOutputError, LLMTransientError
from memories.llm.openai_provider import OpenAIProvider

DATA = ExtractionInput(
    previous_summary="",
    known_facts=[],
    open_loops=[OpenLoopRef(id="mem_loop1", content="Renew passport", floor_no=1)],
    turns=[Turn(floor_no=7, message_id="msg_7", role="user", text="I live in Oslo now. I renewed my passport.")],
)
GOOD = {
    "summary": "User moved to Oslo; passport renewed.",
    "rolling_summary": "User lives in Oslo. Passport renewed.",
    "facts": [{"key": "User.Location", "value": "Oslo", "content": "User lives in Oslo", "importance": 0.8,
               "confidence": 0.9, "floor_no": 7}],
    "open_loops": [],
    "resolutions": [{"target": "mem_loop1", "floor_no": 7}],
}


def _openai_body(content: str) -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}}


def _anthropic_body(content: str) -> dict:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": content}], "usage": {"input_tokens": 100, "output_tokens": 25}}


class Script:
    """Answers requests in order from a list of (status, body)."""

    def __init__(self, responses):
        self.responses = list(responses)
        self.requests = []

    def __call__(self, request):
        self.requests.append(request)
        status, body = self.responses.pop(0)
        return status, body


def _openai(script: Script) -> OpenAIProvider:
    def handler(request: httpx.Request) -> httpx.Response:
        status, body = script(request)
        return httpx.Response(status, json=body)

    provider = OpenAIProvider(model="m", api_key="k", base_url="http://llm.test/v1", max_retries=3,
                              http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    provider.sleep = lambda seconds: None
    return provider


def _anthropic(script: Script) -> AnthropicProvider:
    def handler(request: httpx2.Request) -> httpx2.Response:
        status, body = script(request)
        return httpx2.Response(status, json=body)

    provider = AnthropicProvider(model="m", api_key="k", base_url="http://llm.test", max_retries=3,
                                 http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    provider.sleep = lambda seconds: None
    return provider


ERROR = {"error": {"type": "rate_limit_error", "message": "slow down"}}


@pytest.mark.parametrize("make,body", [(_openai, _openai_body), (_anthropic, _anthropic_body)])
def test_retries_transient_errors_then_succeeds_and_sums_usage(make, body):
    script = Script([(429, ERROR), (500, ERROR), (200, body(json.dumps(GOOD)))])
    result, usage = make(script).extract(DATA)
    assert len(script.requests) == 3
    assert result.facts[0].key == "user.location" and result.facts[0].message_id == "msg_7"
    assert result.resolutions[0].target == "mem_loop1"
    assert usage.input_tokens in (120, 100) and usage.output_tokens in (30, 25)
    sent = json.loads(script.requests[-1].content)
    assert "500 characters" in json.dumps(sent)  # the four summary rules are in the prompt


@pytest.mark.parametrize("make,body", [(_openai, _openai_body), (_anthropic, _anthropic_body)])
def test_gives_up_after_max_retries(make, body):
    script = Script([(429, ERROR)] * 4)
    with pytest.raises(LLMTransientError):
        make(script).extract(DATA)
    assert len(script.requests) == 4  # first try + 3 retries


@pytest.mark.parametrize("make,body", [(_openai, _openai_body), (_anthropic, _anthropic_body)])
def test_schema_invalid_output_is_asked_again_then_fails_clearly(make, body):
    bad_floor = {**GOOD, "facts": [{**GOOD["facts"][0], "floor_no": 99}]}
    script = Script([(200, body("not json at all")), (200, body(json.dumps(bad_floor))),
                     (200, body(json.dumps({"summary": ["not", "text"]})))])
    with pytest.raises(LLMOutputError) as info:
        make(script).extract(DATA)
    assert "schema" in str(info.value)
    assert len(script.requests) == 3
    # The correction prompt quotes the rejection.
    assert "rejected" in script.requests[1].content.decode()


@pytest.mark.parametrize("make,body", [(_openai, _openai_body), (_anthropic, _anthropic_body)])
def test_schema_invalid_then_valid_succeeds_with_usage_of_both(make, body):
    script = Script([(200, body("```json\n{\"summary\": 1}\n```")), (200, body("```json\n" + json.dumps(GOOD) + "\n```"))])
    result, usage = make(script).extract(DATA)
    assert result.summary.startswith("User moved")
    assert usage.input_tokens in (240, 200)


@pytest.mark.parametrize("make,body", [(_openai, _openai_body), (_anthropic, _anthropic_body)])
def test_permanent_errors_are_not_retried(make, body):
    script = Script([(401, {"error": {"type": "authentication_error", "message": "bad key"}})])
    with pytest.raises(LLMError) as info:
        make(script).extract(DATA)
    assert not isinstance(info.value, LLMTransientError)
    assert len(script.requests) == 1


def test_compact_returns_a_clipped_summary():
    script = Script([(200, _openai_body(json.dumps({"summary": "x" * 900})))])
    text, usage = _openai(script).compact(["a", "b"])
    assert len(text) <= 500 and usage.output_tokens == 30


@pytest.mark.django_db
def test_job_records_provider_usage_and_fails_clearly(workspace, settings, monkeypatch):
    """A provider failure marks the job failed with its error; usage of the
    batches that succeeded stays recorded."""
    from memories.models import MemoryJob, ScopeState
    from memories.services.pipeline.execute import memory_job_execute
    from memories.services.scopes import branch_scope_id
    from tests.factories import append_messages

    append_messages(workspace, "c1", [{"role": "user", "content": "I live in Oslo."}])
    scope_id = branch_scope_id("c1", "main")
    ScopeState.objects.create(workspace=workspace, scope="branch", scope_id=scope_id)
    script = Script([(200, _openai_body("nope"))] * 3)
    monkeypatch.setattr("memories.services.pipeline.extract.get_provider", lambda: _openai(script))
    job = MemoryJob.objects.create(workspace=workspace, kind="extract", scope="branch", scope_id=scope_id)
    memory_job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "LLMOutputError" in job.error and "schema" in job.error
    assert ScopeState.objects.get(scope_id=scope_id).last_processed_floor_no == 0

    script.responses = [(200, _openai_body(json.dumps({**GOOD, "facts": [{**GOOD["facts"][0], "floor_no": 1}],
                                                       "resolutions": []})))]
    from memories.services.jobs import memory_job_retry

    memory_job_retry(workspace=workspace, job_id=job.pk)
    memory_job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "succeeded" and job.provider == "openai"
    assert (job.input_tokens, job.output_tokens) == (120, 30)
