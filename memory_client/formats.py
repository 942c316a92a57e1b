"""Stored messages -> the message formats of the Anthropic and OpenAI APIs.

Pure functions over `Message` objects or plain dicts (`{"role", "content",
"metadata"}`), giving the same result as the service's
`GET .../messages?format=anthropic|openai`:

- `system` messages are lifted out of the Anthropic list (`to_anthropic` returns
  them as `system`); same-role turns are merged, empty contents dropped;
- a `tool` message answers the call named by `metadata.tool_use_id` (or
  `tool_call_id`): a `tool_result` block for Anthropic, `tool_call_id` for OpenAI;
- an assistant's `metadata.tool_calls` (OpenAI's shape) become `tool_use` blocks
  for Anthropic and stay `tool_calls` for OpenAI;
- content already in one API's block / part shapes is translated or passed through.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

_ANTHROPIC_BLOCKS = frozenset(
    {
        "text", "image", "document", "search_result", "tool_use", "tool_result", "thinking",
        "redacted_thinking", "server_tool_use", "web_search_tool_result", "container_upload",
    }
)
_OPENAI_ROLES = frozenset({"user", "assistant", "system", "tool"})


def _plain(message: Any) -> Mapping[str, Any]:
    if isinstance(message, Mapping):
        return message
    return {"role": message.role, "content": message.content, "metadata": message.metadata}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _meta(message: Mapping[str, Any]) -> Mapping[str, Any]:
    value = message.get("metadata")
    return value if isinstance(value, Mapping) else {}


def _call_id(message: Mapping[str, Any]) -> str | None:
    meta = _meta(message)
    found = meta.get("tool_use_id") or meta.get("tool_call_id") or message.get("tool_call_id")
    return found if isinstance(found, str) and found else None


def _text_block(text: Any) -> dict[str, Any] | None:
    return {"type": "text", "text": text} if isinstance(text, str) and text.strip() else None


def _block(part: Any) -> dict[str, Any] | None:
    if isinstance(part, str):
        return _text_block(part)
    if isinstance(part, Mapping):
        kind = part.get("type")
        if kind == "text":
            return dict(part) if isinstance(part.get("text"), str) and part["text"].strip() else None
        if kind in _ANTHROPIC_BLOCKS:
            return dict(part)
        if kind in ("input_text", "output_text"):
            return _text_block(part.get("text"))
        if kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            if not isinstance(url, str) or not url:
                return None
            if url.startswith("data:") and ";base64," in url:
                media_type, _, data = url[5:].partition(";base64,")
                return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
            return {"type": "image", "source": {"type": "url", "url": url}}
    return _text_block(_text(part))


def _blocks(content: Any) -> list[dict[str, Any]]:
    parts = content if isinstance(content, list) else [content]
    return [block for block in map(_block, parts) if block is not None]


def _tool_uses(meta: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    calls = meta.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, Mapping) or not isinstance(call.get("id"), str):
            continue
        function = call["function"] if isinstance(call.get("function"), Mapping) else call
        arguments = function.get("arguments", function.get("input", {}))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                arguments = {"arguments": arguments}
        if not isinstance(arguments, Mapping):
            arguments = {"value": arguments}
        out.append({"type": "tool_use", "id": call["id"], "name": str(function.get("name", "")), "input": arguments})
    return out


def _result_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping) and content.get("type") not in _ANTHROPIC_BLOCKS | {"image_url"}:
        return _text(content)  # a plain JSON result reads best as its JSON text
    blocks = _blocks(content)
    if blocks and all(block["type"] in ("text", "image", "document", "search_result") for block in blocks):
        return blocks
    return _text(content)


def to_anthropic(messages: Iterable[Any]) -> dict[str, Any]:
    """`{"system": str | None, "messages": [...]}` for `anthropic.messages.create`."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in map(_plain, messages):
        role, content, meta = message.get("role"), message.get("content"), _meta(message)
        if role == "system":
            text = content if isinstance(content, str) else "\n".join(
                block["text"] if block.get("type") == "text" else _text(block) for block in _blocks(content)
            )
            if text.strip():
                system.append(text)
            continue
        if role == "tool":
            call_id = _call_id(message)
            if call_id:
                block = {"type": "tool_result", "tool_use_id": call_id, "content": _result_content(content)}
                if meta.get("is_error") is True:
                    block["is_error"] = True
                blocks = [block]
            else:
                blocks = _blocks(content)
            role = "user"
        elif role == "assistant":
            blocks = _blocks(content) + _tool_uses(meta)
        else:
            role, blocks = "user", _blocks(content)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["blocks"].extend(blocks)
        else:
            turns.append({"role": role, "blocks": blocks, "raw": content})
    out = []
    for turn in turns:
        blocks = sorted(turn["blocks"], key=lambda block: 0 if block.get("type") == "tool_result" else 1)
        if len(blocks) == 1 and blocks[0] == {"type": "text", "text": turn["raw"]}:
            out.append({"role": turn["role"], "content": turn["raw"]})
        else:
            out.append({"role": turn["role"], "content": blocks})
    return {"system": "\n\n".join(system) or None, "messages": out}


def to_anthropic_messages(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """The `messages` list of `to_anthropic` (system text dropped)."""
    return to_anthropic(messages)["messages"]


def _openai_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append({"type": "text", "text": part})
            elif isinstance(part, Mapping) and isinstance(part.get("type"), str):
                parts.append(dict(part))
            else:
                parts.append({"type": "text", "text": _text(part)})
        return parts
    if isinstance(content, Mapping) and content.get("type") in ("text", "image_url", "input_audio", "file"):
        return [dict(content)]
    return _text(content)


def to_openai_input(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """Chat Completions `messages`: roles user|assistant|system|tool, content passed through."""
    out = []
    for message in map(_plain, messages):
        role = message.get("role")
        if role not in _OPENAI_ROLES:
            continue
        meta = _meta(message)
        item: dict[str, Any] = {"role": role, "content": _openai_content(message.get("content"))}
        if role == "tool":
            call_id = _call_id(message)
            if call_id:
                item["tool_call_id"] = call_id
            if isinstance(item["content"], list):
                item["content"] = [part for part in item["content"] if part.get("type") == "text"] or ""
        if role == "assistant" and isinstance(meta.get("tool_calls"), list) and meta["tool_calls"]:
            item["tool_calls"] = meta["tool_calls"]
        if isinstance(meta.get("name"), str) and role in ("user", "assistant", "system"):
            item["name"] = meta["name"]
        out.append(item)
    return out
