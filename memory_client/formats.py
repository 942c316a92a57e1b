"""Stored messages -> the message formats of the Anthropic and OpenAI APIs.

The one implementation, for the service (`GET .../messages?format=anthropic|
openai`, context assembly) and the Python client alike: pure functions over
`Message` objects or plain dicts (`{"role", "content", "metadata"}`, as the
API returns them), with no Django imports.

Conventions a stored message may follow:
- role `tool`: a tool's result; `metadata.tool_use_id` (or `tool_call_id`)
  names the call it answers.
- role `assistant` with `metadata.tool_calls` (OpenAI's shape:
  `[{"id", "type": "function", "function": {"name", "arguments"}}]`): the
  calls the assistant made.
- content may already be Anthropic blocks or OpenAI content parts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

Message = Mapping[str, Any]


def _plain(message: Any) -> Message:
    """A stored message as a dict: the client's `Message` objects have the
    same three fields."""
    if isinstance(message, Mapping):
        return message
    return {"role": message.role, "content": message.content, "metadata": message.metadata}

# Block types the Anthropic Messages API accepts in a message's content.
ANTHROPIC_BLOCK_TYPES = frozenset(
    {
        "text",
        "image",
        "document",
        "search_result",
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
        "container_upload",
    }
)


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _metadata(message: Message) -> Mapping[str, Any]:
    metadata = message.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def _tool_call_id(message: Message) -> str | None:
    metadata = _metadata(message)
    value = metadata.get("tool_use_id") or metadata.get("tool_call_id") or message.get("tool_call_id")
    return value if isinstance(value, str) and value else None


# --- Anthropic ------------------------------------------------------------------


def _image_block(part: Mapping[str, Any]) -> dict[str, Any] | None:
    """An OpenAI `image_url` part as an Anthropic image block."""
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, Mapping) else image
    if not isinstance(url, str) or not url:
        return None
    if url.startswith("data:") and ";base64," in url:
        media_type, _, data = url[5:].partition(";base64,")
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _anthropic_block(item: Any) -> dict[str, Any] | None:
    """One content item as an Anthropic block; None for an empty one."""
    if isinstance(item, str):
        return {"type": "text", "text": item} if item.strip() else None
    if isinstance(item, Mapping):
        kind = item.get("type")
        if kind == "text":
            text = item.get("text")
            return dict(item) if isinstance(text, str) and text.strip() else None
        if kind in ANTHROPIC_BLOCK_TYPES:
            return dict(item)
        if kind in {"input_text", "output_text"}:  # OpenAI Responses-style parts
            text = item.get("text")
            return {"type": "text", "text": text} if isinstance(text, str) and text.strip() else None
        if kind == "image_url":
            return _image_block(item)
    text = _json_text(item)
    return {"type": "text", "text": text} if text.strip() else None


def _anthropic_blocks(content: Any) -> list[dict[str, Any]]:
    items = content if isinstance(content, list) else [content]
    return [block for block in (_anthropic_block(item) for item in items) if block is not None]


def _tool_result_content(content: Any) -> str | list[dict[str, Any]]:
    """A tool_result's content: a string, or text/image blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping) and content.get("type") not in ANTHROPIC_BLOCK_TYPES | {"image_url"}:
        return _json_text(content)
    blocks = _anthropic_blocks(content)
    if blocks and all(block["type"] in {"text", "image", "document", "search_result"} for block in blocks):
        return blocks
    return _json_text(content)


def _tool_use_blocks(metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
    blocks = []
    calls = metadata.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, Mapping) or not isinstance(call.get("id"), str):
            continue
        function = call.get("function") if isinstance(call.get("function"), Mapping) else call
        arguments = function.get("arguments", function.get("input", {}))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                arguments = {"arguments": arguments}
        if not isinstance(arguments, Mapping):
            arguments = {"value": arguments}
        blocks.append({"type": "tool_use", "id": call["id"], "name": str(function.get("name", "")), "input": arguments})
    return blocks


def system_text(content: Any) -> str:
    """A system message's content as the text of Anthropic's `system`."""
    if isinstance(content, str):
        return content
    parts = []
    for block in _anthropic_blocks(content):
        parts.append(block["text"] if block.get("type") == "text" else _json_text(block))
    return "\n".join(parts)


def to_anthropic(messages: Iterable[Any]) -> dict[str, Any]:
    """`{"system": str | None, "messages": [...]}` for `anthropic.messages.create`.

    System messages are lifted into `system` (joined by blank lines); tool
    results become `tool_result` blocks at the front of a user turn; turns of
    the same role are merged, since the API wants them alternating; empty
    contents are dropped, since the API refuses them.
    """
    system_parts: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in map(_plain, messages):
        role = message.get("role")
        content = message.get("content")
        metadata = _metadata(message)
        if role == "system":
            text = system_text(content)
            if text.strip():
                system_parts.append(text)
            continue
        if role == "tool":
            tool_use_id = _tool_call_id(message)
            if tool_use_id:
                block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": _tool_result_content(content)}
                if metadata.get("is_error") is True:
                    block["is_error"] = True
                blocks = [block]
            else:
                # A result that names no call cannot be a tool_result block.
                blocks = _anthropic_blocks(content)
            role = "user"
        elif role == "assistant":
            blocks = _anthropic_blocks(content) + _tool_use_blocks(metadata)
        else:
            role = "user"
            blocks = _anthropic_blocks(content)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["blocks"].extend(blocks)
        else:
            turns.append({"role": role, "blocks": blocks, "raw": content})

    result = []
    for turn in turns:
        blocks = turn["blocks"]
        # In a user turn, tool results must come before any other block.
        blocks.sort(key=lambda block: 0 if block.get("type") == "tool_result" else 1)
        if len(blocks) == 1 and blocks[0] == {"type": "text", "text": turn["raw"]}:
            result.append({"role": turn["role"], "content": turn["raw"]})
        else:
            result.append({"role": turn["role"], "content": blocks})
    return {"system": "\n\n".join(system_parts) or None, "messages": result}


def to_anthropic_messages(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """Only the `messages` list of `to_anthropic` (system text dropped)."""
    return to_anthropic(messages)["messages"]


# --- OpenAI Chat Completions ----------------------------------------------------

OPENAI_ROLES = frozenset({"user", "assistant", "system", "tool"})


def _openai_content(content: Any) -> Any:
    """Strings and content-part arrays pass through; bare strings in an array
    become text parts and other objects JSON text, which the API would refuse."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, str):
                parts.append({"type": "text", "text": item})
            elif isinstance(item, Mapping) and isinstance(item.get("type"), str):
                parts.append(dict(item))
            else:
                parts.append({"type": "text", "text": _json_text(item)})
        return parts
    if isinstance(content, Mapping) and content.get("type") in {"text", "image_url", "input_audio", "file"}:
        return [dict(content)]
    return _json_text(content)


def to_openai(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """Chat Completions `messages`: roles user|assistant|system|tool, content passed through.

    Tool messages keep `tool_call_id`; assistant messages keep `tool_calls`
    from their metadata; `metadata.name` becomes the participant `name`.
    """
    result = []
    for message in map(_plain, messages):
        role = message.get("role")
        if role not in OPENAI_ROLES:
            continue
        metadata = _metadata(message)
        item: dict[str, Any] = {"role": role, "content": _openai_content(message.get("content"))}
        if role == "tool":
            tool_call_id = _tool_call_id(message)
            if tool_call_id:
                item["tool_call_id"] = tool_call_id
            if isinstance(item["content"], list):
                item["content"] = [p for p in item["content"] if p.get("type") == "text"] or ""
        if role == "assistant" and isinstance(metadata.get("tool_calls"), list) and metadata["tool_calls"]:
            item["tool_calls"] = metadata["tool_calls"]
        if isinstance(metadata.get("name"), str) and role in {"user", "assistant", "system"}:
            item["name"] = metadata["name"]
        result.append(item)
    return result


to_openai_input = to_openai


# The client's name for `to_openai` (Chat Completions input).
to_openai_input = to_openai
