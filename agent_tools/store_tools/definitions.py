"""The agent's memory tools (spec 004) as tool definitions for model APIs.

One neutral definition per tool, rendered in three formats:
- `anthropic`: `{"name", "description", "input_schema"}` (Messages API `tools`),
- `openai`: `{"type": "function", "function": {"name", "description", "parameters"}}`
  (Chat Completions `tools`),
- `openai_responses`: `{"type": "function", "name", "description", "parameters"}`
  (Responses API `tools`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memories.models import MAX_PATH_SEGMENTS
from memory_project.errors import ValidationError

FORMATS = ("anthropic", "openai", "openai_responses")

# A memory's content is at most 100 KB: no line number beyond this is real.
MAX_LINE_NUMBER = 1_000_000

_PATH = {
    "type": "string",
    "description": "Path of the memory inside the store, e.g. /notes/project.md (starts with /, case-sensitive).",
}
_PREFIX = {
    "type": "string",
    "description": "Directory to look in, ending with '/', e.g. /notes/. Defaults to / (the whole store).",
}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]
    writes: bool


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "memory_list",
            "List the memories in the store (paths and sizes, no content), optionally under a directory. "
            "With depth=1 only direct children are listed and deeper paths are grouped into directories.",
            {
                "type": "object",
                "properties": {
                    "path_prefix": _PREFIX,
                    "depth": {"type": "integer", "minimum": 0, "maximum": MAX_PATH_SEGMENTS,
                              "description": "0 lists everything below the prefix."},
                    "page": {"type": "string", "description": "The next_page token of a previous call."},
                },
                "additionalProperties": False,
            },
            writes=False,
        ),
        ToolSpec(
            "memory_search",
            "Full-text search in the content and paths of the store's memories (case-insensitive substring, "
            "any language). Returns matching paths with the matching lines.",
            {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "description": "Text to look for."},
                    "path_prefix": _PREFIX,
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "At most this many memories (default 10)."},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            writes=False,
        ),
        ToolSpec(
            "memory_read",
            "Read a memory's content (with line numbers). Optionally only lines view_range=[start, end] "
            "(1-based, end -1 for the last line).",
            {
                "type": "object",
                "properties": {
                    "path": _PATH,
                    "view_range": {"type": "array", "items": {"type": "integer", "minimum": -1, "maximum": MAX_LINE_NUMBER},
                                   "minItems": 2, "maxItems": 2},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
            writes=False,
        ),
        ToolSpec(
            "memory_write",
            "Create a memory at a path, or overwrite the memory there with new content (at most 100 kB). "
            "Prefer many small focused files over a few large ones.",
            {
                "type": "object",
                "properties": {"path": _PATH, "content": {"type": "string", "description": "The full new content."}},
                "required": ["path", "content"],
                "additionalProperties": False,
            },
            writes=True,
        ),
        ToolSpec(
            "memory_edit",
            "Edit a memory by replacing one exact occurrence of old_str with new_str. old_str must appear "
            "exactly once in the memory (include surrounding text to make it unique).",
            {
                "type": "object",
                "properties": {
                    "path": _PATH,
                    "old_str": {"type": "string", "minLength": 1, "description": "Exact text to replace."},
                    "new_str": {"type": "string", "description": "Replacement text (may be empty)."},
                },
                "required": ["path", "old_str", "new_str"],
                "additionalProperties": False,
            },
            writes=True,
        ),
        ToolSpec(
            "memory_delete",
            "Delete the memory at a path.",
            {
                "type": "object",
                "properties": {"path": _PATH},
                "required": ["path"],
                "additionalProperties": False,
            },
            writes=True,
        ),
    )
}


def tool_spec(name: str) -> ToolSpec | None:
    return TOOLS.get(name)


def _describe(spec: ToolSpec, store_label: str | None) -> str:
    return f"{spec.description} (Memory store: {store_label}.)" if store_label else spec.description


def tool_definitions(*, fmt: str, store_label: str | None = None, writable: bool = True) -> list[dict[str, Any]]:
    """The tools in `fmt`; without `writable`, only the read tools."""
    if fmt not in FORMATS:
        raise ValidationError(f"format must be one of: {', '.join(FORMATS)}.")
    out: list[dict[str, Any]] = []
    for spec in TOOLS.values():
        if spec.writes and not writable:
            continue
        description = _describe(spec, store_label)
        if fmt == "anthropic":
            out.append({"name": spec.name, "description": description, "input_schema": spec.parameters})
        elif fmt == "openai":
            out.append(
                {
                    "type": "function",
                    "function": {"name": spec.name, "description": description, "parameters": spec.parameters},
                }
            )
        else:
            out.append({"type": "function", "name": spec.name, "description": description, "parameters": spec.parameters})
    return out
