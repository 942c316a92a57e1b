"""The agent tools of the MCP server (and of `/v1/agent_tools`), written for a model.

Two families:
- the six memory-store tools of `agent_tools.store_tools` (files in a store, by path),
  each with a `store_id` or `store` (name) argument to pick the store;
- conversation memory: `recall`, `remember`, `forget`, `list_memories`.

Each tool has a JSON schema a model can follow (every field described, no
unions at the top level, `additionalProperties: false`) and says whether it
writes: read-only keys are shown and may call only the tools that do not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_tools.store_tools import TOOLS as STORE_TOOLS

RECALL_DEFAULT_TOKENS = 1000
RECALL_MAX_TOKENS = 20_000
LIST_DEFAULT_LIMIT = 20
LIST_MAX_LIMIT = 100
# As the REST list (memories.views.items.MAX_OFFSET): every integer has a ceiling.
LIST_MAX_OFFSET = 1_000_000


@dataclass(frozen=True)
class AgentTool:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    writes: bool
    destructive: bool = False
    store_tool: bool = False
    annotations: dict[str, Any] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        """The REST shape (`GET /v1/agent_tools`), snake_case like the rest of the API."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "input_schema": self.input_schema,
            "read_only": not self.writes,
            "destructive": self.destructive,
        }


_STORE_SELECTOR = {
    "store_id": {
        "type": "string",
        "description": "Id of the memory store (memstore_...). Give this or `store`; leave both out when the "
        "workspace has a single store.",
    },
    "store": {
        "type": "string",
        "description": "Name of the memory store, as an alternative to store_id.",
    },
}
_STORE_NOTE = (
    " Memory stores hold files by path that stay across conversations. Pick the store with store_id or "
    "store (its name); the error of a call without one lists the stores when there are several."
)
_STORE_TITLES = {
    "memory_list": "List files in a memory store",
    "memory_search": "Search a memory store",
    "memory_read": "Read a file from a memory store",
    "memory_write": "Write a file to a memory store",
    "memory_edit": "Edit a file in a memory store",
    "memory_delete": "Delete a file from a memory store",
}


def _store_tool(name: str) -> AgentTool:
    spec = STORE_TOOLS[name]
    schema = dict(spec.parameters)
    schema["properties"] = {**_STORE_SELECTOR, **spec.parameters["properties"]}
    return AgentTool(
        name=name,
        title=_STORE_TITLES[name],
        description=spec.description + _STORE_NOTE,
        input_schema=schema,
        writes=spec.writes,
        destructive=name in ("memory_write", "memory_edit", "memory_delete"),
        store_tool=True,
    )


_USER_ID = {
    "type": "string",
    "minLength": 1,
    "maxLength": 256,
    "description": "Id of the end user the memory is about (the user_id their conversations carry).",
}
_CONVERSATION_ID = {
    "type": "string",
    "minLength": 1,
    "maxLength": 256,
    "description": "Id of the conversation (as the application named it).",
}



def _object(properties: dict[str, Any], *, required: list[str] | None = None) -> dict[str, Any]:
    """A tool's input schema: an object of these properties and no others."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _unit_interval(description: str) -> dict[str, Any]:
    return {"type": "number", "minimum": 0, "maximum": 1, "description": description}


_MEMORY_TOOLS = (
    AgentTool(
        name="recall",
        title="Recall relevant memories",
        description=(
            "Recall what is remembered that is relevant to a query: the rolling summary of a conversation and "
            "the memories (facts, preferences, open tasks, summaries) that best match, ranked and cut to a "
            "token budget. Give conversation_id to recall in a conversation (its own memories, its user's and "
            "the global ones), or user_id to recall what is known about a user across conversations; with "
            "neither, only global memories are searched. Call this before answering when earlier context "
            "could matter. Each memory is listed with its id (use it with forget)."
        ),
        input_schema=_object(
            {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 4000,
                    "description": "What to look for, in natural language, e.g. 'seat preference for flights'.",
                },
                "conversation_id": _CONVERSATION_ID,
                "user_id": _USER_ID,
                "max_tokens": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": RECALL_MAX_TOKENS,
                    "description": f"Token budget of the whole answer, summary and labels included, counted "
                                   f"with the o200k_base tokenizer (default {RECALL_DEFAULT_TOKENS}).",
                },
                "strategy": {
                    "type": "string",
                    "enum": ["balanced", "importance", "dual-summary"],
                    "description": "How memories are ranked besides relevance (default balanced).",
                },
            },
            required=["query"],
        ),
        writes=False,
    ),
    AgentTool(
        name="remember",
        title="Remember a fact or preference",
        description=(
            "Remember a fact or a preference for later conversations, e.g. 'Prefers aisle seats'. With user_id "
            "it is remembered for that user only (every conversation of that user sees it); without, it is "
            "global to the workspace (every conversation sees it). Give a fact_key (a short stable name such "
            "as 'seat preference') so that a later value for the same key replaces this one: the old value is "
            "then marked deprecated, not deleted. Write one self-contained statement per call."
        ),
        input_schema=_object(
            {
                "content": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 100_000,
                    "description": "The fact or preference, as one self-contained sentence.",
                },
                "fact_key": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 255,
                    "description": "Stable name of what this fact is about (case and spacing are ignored).",
                },
                "user_id": _USER_ID,
                "importance": _unit_interval("How much this matters, 0 to 1 (default 0.7)."),
                "confidence": _unit_interval("How sure it is, 0 to 1 (default 1)."),
                "metadata": {
                    "type": "object",
                    "maxProperties": 64,
                    "description": "Your own labels for this memory (a source, categories, an id of yours), kept "
                                   "as given; list_memories can filter on them.",
                },
            },
            required=["content"],
        ),
        writes=True,
    ),
    AgentTool(
        name="forget",
        title="Forget a memory",
        description=(
            "Forget a memory by its id (as recall or list_memories show it). By default it is deprecated: "
            "it stops being recalled but its history stays. mode='delete' removes it altogether."
        ),
        input_schema=_object(
            {
                "memory_id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "Id of the memory (mem_...)."},
                "mode": {
                    "type": "string",
                    "enum": ["deprecate", "delete"],
                    "description": "deprecate (default) or delete.",
                },
            },
            required=["memory_id"],
        ),
        writes=True,
        destructive=True,
    ),
    AgentTool(
        name="list_memories",
        title="List memories",
        description=(
            "List remembered memories, newest first, with filters, a page at a time (limit/offset) and the "
            "total count. Use it to review what is known (about a user, in a conversation, under a fact_key) "
            "rather than to answer a question: recall ranks by relevance."
        ),
        input_schema=_object(
            {
                "user_id": {**_USER_ID, "description": "Only the memories kept for this user."},
                "conversation_id": {**_CONVERSATION_ID, "description": "Only the memories of this conversation."},
                "scope": {
                    "type": "string",
                    "enum": ["global", "user", "chat", "branch", "floor"],
                    "description": "Only this scope: global (workspace), user, chat/branch/floor (one conversation).",
                },
                "type": {
                    "type": "string",
                    "enum": ["fact", "summary", "open_loop"],
                    "description": "Only this kind: fact (facts and preferences), summary, open_loop (open tasks).",
                },
                "status": {
                    "type": "string",
                    "enum": ["active", "deprecated"],
                    "description": "active (default) or deprecated (replaced or forgotten).",
                },
                "fact_key": {"type": "string", "minLength": 1, "maxLength": 255, "description": "Only facts with this key."},
                "query": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "Only memories containing this text."},
                "metadata": {"type": "object", "minProperties": 1, "maxProperties": 64,
                             "description": "Only memories whose metadata holds each of these keys with that value "
                                            "(strings, numbers, booleans)."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": LIST_MAX_LIMIT,
                    "description": f"Page size (default {LIST_DEFAULT_LIMIT}).",
                },
                "offset": {"type": "integer", "minimum": 0, "maximum": LIST_MAX_OFFSET,
                           "description": "Memories to skip (default 0)."},
            },
        ),
        writes=False,
    ),
)

AGENT_TOOLS: dict[str, AgentTool] = {
    tool.name: tool for tool in (*(_store_tool(name) for name in STORE_TOOLS), *_MEMORY_TOOLS)
}


def agent_tools_for(*, read_only: bool) -> list[AgentTool]:
    """The tools a key may see: all of them, or only those that do not write."""
    return [tool for tool in AGENT_TOOLS.values() if not (read_only and tool.writes)]
