"""Stored messages -> Anthropic Messages / OpenAI Chat Completions payloads."""

from __future__ import annotations

import pytest
from anthropic.types import ImageBlockParam, TextBlockParam, ToolResultBlockParam, ToolUseBlockParam
from openai.types.chat import ChatCompletionMessageParam
from pydantic import TypeAdapter

from memory_client.formats import to_anthropic, to_anthropic_messages, to_openai
from tests.conversations.helpers import append_ok, assert_error, messages

BLOCK_SCHEMAS = {
    "text": TypeAdapter(TextBlockParam),
    "image": TypeAdapter(ImageBlockParam),
    "tool_use": TypeAdapter(ToolUseBlockParam),
    "tool_result": TypeAdapter(ToolResultBlockParam),
}
OPENAI_MESSAGE = TypeAdapter(ChatCompletionMessageParam)


def assert_valid_anthropic(payload: dict) -> None:
    """The rules the Messages API enforces on `system` + `messages`."""
    assert set(payload) == {"system", "messages"}
    assert payload["system"] is None or (isinstance(payload["system"], str) and payload["system"].strip())
    turns = payload["messages"]
    assert turns, "at least one message"
    assert turns[0]["role"] == "user"
    previous_tool_uses: set[str] = set()
    for index, turn in enumerate(turns):
        assert set(turn) == {"role", "content"}
        assert turn["role"] in {"user", "assistant"}
        if index:
            assert turn["role"] != turns[index - 1]["role"], "roles must alternate"
        content = turn["content"]
        if isinstance(content, str):
            assert content.strip()
            previous_tool_uses = set()
            continue
        assert isinstance(content, list) and content
        seen_other = False
        for block in content:
            schema = BLOCK_SCHEMAS[block["type"]]
            schema.validate_python(block)
            if block["type"] == "text":
                assert block["text"].strip(), "empty text blocks are refused"
            if block["type"] == "tool_result":
                assert turn["role"] == "user"
                assert not seen_other, "tool_result blocks come first"
                assert block["tool_use_id"] in previous_tool_uses, "answers a tool_use of the previous turn"
                result = block.get("content")
                assert isinstance(result, str) or all(b["type"] in {"text", "image"} for b in result)
            else:
                seen_other = True
            if block["type"] == "tool_use":
                assert turn["role"] == "assistant" and isinstance(block["input"], dict)
        previous_tool_uses = {b["id"] for b in content if b["type"] == "tool_use"}


HISTORY = [
    {"role": "system", "content": "You are helpful.", "metadata": {}},
    {"role": "system", "content": [{"type": "text", "text": "Answer in French."}], "metadata": {}},
    {"role": "user", "content": "What's the weather in Paris?", "metadata": {}},
    {"role": "user", "content": ["and", {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}}], "metadata": {}},
    {
        "role": "assistant",
        "content": "Let me check.",
        "metadata": {"tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    },
    {"role": "tool", "content": {"temp_c": 21}, "metadata": {"tool_call_id": "call_1"}},
    {"role": "user", "content": "thanks", "metadata": {}},
    {"role": "assistant", "content": [{"type": "text", "text": "Il fait 21°C."}, {"type": "tool_use", "id": "tu_2", "name": "log", "input": {}}], "metadata": {}},
    {"role": "tool", "content": ["logged", "ok"], "metadata": {"tool_use_id": "tu_2", "is_error": True}},
    {"role": "assistant", "content": "", "metadata": {}},
    {"role": "assistant", "content": "Done.", "metadata": {}},
]


def test_to_anthropic_shape():
    payload = to_anthropic(HISTORY)
    assert_valid_anthropic(payload)
    assert payload["system"] == "You are helpful.\n\nAnswer in French."
    turns = payload["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert turns[0]["content"] == [
        {"type": "text", "text": "What's the weather in Paris?"},
        {"type": "text", "text": "and"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}},
    ]
    assert turns[1]["content"][1] == {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Paris"}}
    # The tool result leads the merged user turn, before "thanks".
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": '{"temp_c": 21}'},
        {"type": "text", "text": "thanks"},
    ]
    assert turns[4]["content"] == [
        {"type": "tool_result", "tool_use_id": "tu_2", "is_error": True, "content": [{"type": "text", "text": "logged"}, {"type": "text", "text": "ok"}]}
    ]
    # The empty assistant message is dropped; a lone string stays a string.
    assert turns[5] == {"role": "assistant", "content": "Done."}
    assert to_anthropic_messages(HISTORY) == turns


def test_to_anthropic_simple_history_keeps_strings_and_no_system():
    payload = to_anthropic([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    assert payload == {"system": None, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    assert_valid_anthropic(payload)


def test_tool_message_without_call_id_becomes_user_text():
    payload = to_anthropic([{"role": "user", "content": "q"}, {"role": "tool", "content": "orphan result"}])
    assert payload["messages"] == [{"role": "user", "content": [{"type": "text", "text": "q"}, {"type": "text", "text": "orphan result"}]}]


def test_to_openai_passes_roles_and_content_through():
    result = to_openai(HISTORY)
    assert [m["role"] for m in result] == [m["role"] for m in HISTORY]
    assert result[0] == {"role": "system", "content": "You are helpful."}
    assert result[1]["content"] == [{"type": "text", "text": "Answer in French."}]
    assert result[3]["content"][0] == {"type": "text", "text": "and"}
    assert result[4]["tool_calls"][0]["id"] == "call_1"
    assert result[5] == {"role": "tool", "content": '{"temp_c": 21}', "tool_call_id": "call_1"}
    assert result[8]["tool_call_id"] == "tu_2"
    for message in result:
        OPENAI_MESSAGE.validate_python(message)


@pytest.mark.django_db
def test_formats_through_the_api(api):
    append_ok(api, "c1", "Be brief.", role="system")
    append_ok(api, "c1", "hi")
    append_ok(api, "c1", "call tool", role="assistant", metadata={"tool_calls": [{"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
    append_ok(api, "c1", "42", role="tool", metadata={"tool_call_id": "t1"})
    body = messages(api, "c1", format="anthropic").json()
    assert_valid_anthropic(body["data"])
    assert body["data"]["system"] == "Be brief."
    assert body["data"]["messages"][-1] == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "42"}]}
    assert body["meta"] == {"next_cursor": None, "previous_cursor": None}
    body = messages(api, "c1", format="openai").json()
    assert [m["role"] for m in body["data"]] == ["system", "user", "assistant", "tool"]
    for message in body["data"]:
        OPENAI_MESSAGE.validate_python(message)
    paged = messages(api, "c1", format="openai", limit=2).json()
    assert len(paged["data"]) == 2 and paged["meta"]["next_cursor"]
    assert_error(messages(api, "c1", format="xml"), 400, "invalid_request_error")
