"""Running the agent tools for one API key: the MCP server's `tools/call` and
`POST /v1/agent_tools/{name}` both end here.

Like the memory-store tools, whatever the model can fix itself (bad input, an
unknown id, a store to choose, a stale edit) comes back as a result with an
error. A read-only key asking for a write tool, and an unknown tool, raise
(403 / 404 over REST; the MCP server turns them into tool errors as well).
"""

from __future__ import annotations

import json
from typing import Any

from django.db.models import Q
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError

from accounts.actors import Actor
from agent_tools.mcp.catalogue import AGENT_TOOLS, LIST_DEFAULT_LIMIT, RECALL_DEFAULT_TOKENS, AgentTool
from agent_tools.mcp.recall import Recalled, recall_context
from agent_tools.store_tools import ToolResult, memory_tool_execute
from conversations.selectors.conversations import conversation_get_or_404
from conversations.selectors.references import messages_of_conversation
from memories.llm.tokens import ENCODING_NAME, count_tokens
from memories.models import MemoryItem, MemoryStore, Scope, Status
from memories.selectors.items import memory_item_list
from memories.serializers.items import MemoryItemOutputSerializer
from memories.services.facts import memory_fact_remember
from memories.services.items import memory_item_update
from memories.services.lineage.erase import memory_delete_following_lineage
from memory_project.errors import DomainError, NotFoundError, PermissionDeniedError, ValidationError

READ_ONLY_DENIAL = "This API key is read-only: {name} writes, so it is not available."
# A store choice error names at most this many stores: enough to pick from,
# short enough for a model's context.
STORES_NAMED_IN_ERRORS = 20
_VALIDATORS = {name: Draft202012Validator(tool.input_schema) for name, tool in AGENT_TOOLS.items()}


def agent_tool_execute(*, workspace, api_key, name: str, arguments: Any, actor: Actor) -> ToolResult:
    """Run tool `name` with `arguments` for `api_key` of `workspace`. Raises
    NotFoundError (no such tool) and PermissionDeniedError (a write tool for a
    read-only key); every other domain error is returned as an error result."""
    tool = AGENT_TOOLS.get(name)
    if tool is None:
        raise NotFoundError(f"No tool '{name}'. The tools are: {', '.join(AGENT_TOOLS)}.")
    if tool.writes and api_key.read_only:
        raise PermissionDeniedError(READ_ONLY_DENIAL.format(name=name))
    try:
        data = _validated(tool, arguments)
        if tool.store_tool:
            return _run_store_tool(workspace, api_key, tool, data, actor)
        return _RUNNERS[name](workspace, data, actor)
    except PermissionDeniedError:
        raise
    except DomainError as exc:
        return ToolResult(name, exc.message, {}, {"type": exc.code, "message": exc.message})


def _validated(tool: AgentTool, arguments: Any) -> dict[str, Any]:
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ValidationError("The tool input must be an object.")
    # The first error by field, so the same bad input always gets the same message.
    errors = sorted(_VALIDATORS[tool.name].iter_errors(arguments), key=lambda e: [str(part) for part in e.path])
    error = errors[0] if errors else None
    if error is not None:
        raise ValidationError(_explain(error))
    return dict(arguments)


def _explain(error: SchemaError) -> str:
    """One sentence a model can act on, naming the field."""
    field = ".".join(str(part) for part in error.path)
    where = f"input.{field}" if field else "input"
    schema = error.schema if isinstance(error.schema, dict) else {}
    match error.validator:
        case "required":
            missing = error.message.split("'")[1] if "'" in error.message else error.message
            return f"input.{missing} is required."
        case "additionalProperties":
            allowed = ", ".join(schema.get("properties", {}))
            unknown = sorted(set(error.instance) - set(schema.get("properties", {})))
            return f"Unknown input field(s): {', '.join(unknown)}. Allowed: {allowed}."
        case "type":
            return f"{where} must be of type {error.validator_value}."
        case "enum":
            return f"{where} must be one of: {', '.join(map(str, error.validator_value))}."
        case "minLength":
            return f"{where} must not be empty."
        case "maxLength":
            return f"{where} is too long (at most {error.validator_value} characters)."
        case "minimum" | "maximum":
            low, high = schema.get("minimum"), schema.get("maximum")
            bounds = f"between {low} and {high}" if low is not None and high is not None else (
                f"at least {low}" if low is not None else f"at most {high}")
            return f"{where} must be {bounds}."
    return f"{where}: {error.message}"


# --- memory-store tools -----------------------------------------------------------


def _run_store_tool(workspace, api_key, tool: AgentTool, data: dict[str, Any], actor: Actor) -> ToolResult:
    store = _choose_store(workspace, data.pop("store_id", None), data.pop("store", None))
    result = memory_tool_execute(
        store=store, name=tool.name, tool_input=data, actor=actor, can_write=not api_key.read_only,
        denial=READ_ONLY_DENIAL.format(name=tool.name),
    )
    result.output = {"memory_store_id": store.pk, **result.output}
    return result


def _choose_store(workspace, store_id: str | None, name: str | None) -> MemoryStore:
    if store_id is not None and name is not None:
        raise ValidationError("Give store_id or store, not both.")
    if store_id is not None:
        store = MemoryStore.objects.filter(workspace=workspace, pk=store_id).first()
        if store is None:
            raise NotFoundError(f"No memory store '{store_id}'. {_stores_hint(workspace)}")
        return store
    live = MemoryStore.objects.filter(workspace=workspace, archived_at__isnull=True).order_by("created_at", "pk")
    if name is not None:
        named = list(live.filter(name=name)[:2]) or list(
            MemoryStore.objects.filter(workspace=workspace, name=name).order_by("created_at", "pk")[:2]
        )
        if not named:
            raise NotFoundError(f"No memory store named {name!r}. {_stores_hint(workspace)}")
        if len(named) > 1:
            raise ValidationError(f"Several memory stores are named {name!r}: give store_id. {_stores_hint(workspace)}")
        return named[0]
    stores = list(live[:2])
    if len(stores) == 1:
        return stores[0]
    if not stores:
        raise NotFoundError("This workspace has no memory store yet (an operator or the API creates them).")
    raise ValidationError(f"Several memory stores: give store_id or store. {_stores_hint(workspace)}")


def _stores_hint(workspace) -> str:
    stores = list(
        MemoryStore.objects.filter(workspace=workspace, archived_at__isnull=True)
        .order_by("created_at", "pk").values_list("pk", "name")[: STORES_NAMED_IN_ERRORS + 1]
    )
    if not stores:
        return "This workspace has no memory store yet."
    named = ", ".join(f"{name!r} ({pk})" for pk, name in stores[:STORES_NAMED_IN_ERRORS])
    more = " and more" if len(stores) > STORES_NAMED_IN_ERRORS else ""
    return f"The stores are: {named}{more}."


# --- conversation memory ------------------------------------------------------------


def _recall(workspace, data: dict[str, Any], actor: Actor) -> ToolResult:
    conversation_id, user_id = data.get("conversation_id"), data.get("user_id")
    if conversation_id is not None and user_id is not None:
        raise ValidationError(
            "Give conversation_id or user_id, not both: a conversation already recalls its user's memories."
        )
    recalled = recall_context(
        workspace=workspace, query=data["query"], budget=int(data.get("max_tokens", RECALL_DEFAULT_TOKENS)),
        strategy=data.get("strategy", "balanced"), conversation_id=conversation_id, user_id=user_id,
    )
    text = _fit_recall(recalled)
    output = {
        "query": recalled.query,
        "conversation_id": recalled.conversation_id,
        "user_id": recalled.user_id,
        "summary": recalled.summary,
        "memories": recalled.memories,
        "tokens_used": recalled.tokens_used,
        "budget": recalled.budget,
        "omitted_count": recalled.omitted_count,
        "tokenizer": ENCODING_NAME,
    }
    return ToolResult("recall", text, output)


def _fit_recall(recalled: Recalled) -> str:
    """The tool's text within `max_tokens`, counted (o200k_base) on the very
    text the model reads: the summary, the header and each line's labels and
    ids included. Memories that do not fit are dropped from the end (and
    counted as omitted), then the summary is clipped; what is left is
    reported in `tokens_used`."""
    budget = recalled.budget
    text = _render_recall(recalled)
    while count_tokens(text) > budget and recalled.memories:
        recalled.memories.pop()
        recalled.omitted_count += 1
        text = _render_recall(recalled)
    if count_tokens(text) > budget and recalled.summary:
        summary = recalled.summary
        while summary and count_tokens(text) > budget:
            summary = summary[: len(summary) * 3 // 4].rstrip()
            recalled.summary = (summary + " ...") if summary else None
            text = _render_recall(recalled)
    if count_tokens(text) > budget:
        text = "(nothing fits)" if count_tokens("(nothing fits)") <= budget else ""
    recalled.tokens_used = count_tokens(text)
    return text


def _render_recall(recalled: Recalled) -> str:
    parts = []
    if recalled.summary:
        parts.append(f"Conversation summary:\n{recalled.summary}")
    if recalled.memories:
        lines = [_recalled_line(m) for m in recalled.memories]
        header = f"Recalled (within {recalled.budget} tokens"
        header += f"; {recalled.omitted_count} more did not fit):" if recalled.omitted_count else "):"
        parts.append(header + "\n" + "\n".join(lines))
    if not parts:
        return f"Nothing remembered matches {recalled.query!r}."
    return "\n\n".join(parts)


def _recalled_line(entry: dict[str, Any]) -> str:
    if entry.get("kind") == "passage":
        return (f"- [message {entry['floor_no']}, {entry['role']}] {entry['content']}"
                f" (message {entry['source_message_id']})")
    tier = f"/{entry['summary_tier']}" if entry.get("summary_tier") else ""
    key = f", key {entry['fact_key']!r}" if entry.get("fact_key") else ""
    return f"- [{entry['type']}{tier}, {entry['scope']}] {entry['content']} (id {entry['id']}{key})"


def _remember(workspace, data: dict[str, Any], actor: Actor) -> ToolResult:
    user_id = data.get("user_id")
    result = memory_fact_remember(
        workspace=workspace, actor=actor, scope="user" if user_id is not None else Scope.GLOBAL,
        scope_id=user_id or "", content=data["content"], fact_key=data.get("fact_key"),
        importance=data.get("importance", 0.7), confidence=data.get("confidence", 1.0),
        metadata=data.get("metadata"),
    )
    item = result.item
    where = f"for user {user_id!r}" if user_id is not None else "globally"
    if result.operation == "unchanged":
        text = f"Already remembered {where}: {item.content} (id {item.pk})."
    else:
        text = f"Remembered {where}: {item.content} (id {item.pk})."
        if result.deprecated_ids:
            text += f" It replaces {', '.join(result.deprecated_ids)} (now deprecated)."
    output = {"operation": result.operation, "deprecated_ids": result.deprecated_ids,
              "memory": MemoryItemOutputSerializer(item).data}
    return ToolResult("remember", text, output)


def _forget(workspace, data: dict[str, Any], actor: Actor) -> ToolResult:
    memory_id, mode = data["memory_id"], data.get("mode", "deprecate")
    item = MemoryItem.objects.filter(workspace=workspace, pk=memory_id).only("pk", "scope", "path", "status").first()
    if item is None:
        raise NotFoundError(f"No memory '{memory_id}'.")
    if item.scope == Scope.STORE:
        raise ValidationError(f"{memory_id} is the file {item.path} of a memory store: use memory_delete for it.")
    if mode == "delete":
        memory_delete_following_lineage(workspace=workspace, actor=actor, memory_id=memory_id)
        return ToolResult("forget", f"Deleted {memory_id}.", {"id": memory_id, "operation": "deleted"})
    if item.status == Status.DEPRECATED:
        return ToolResult("forget", f"{memory_id} was already deprecated.", {"id": memory_id, "operation": "unchanged"})
    updated = memory_item_update(workspace=workspace, actor=actor, memory_id=memory_id,
                                 changes={"status": Status.DEPRECATED})
    return ToolResult("forget", f"Deprecated {memory_id}: it will no longer be recalled.",
                      {"id": memory_id, "operation": "deprecated", "memory": MemoryItemOutputSerializer(updated).data})


def _list(workspace, data: dict[str, Any], actor: Actor) -> ToolResult:

    filters: dict[str, Any] = {"status": data.get("status", Status.ACTIVE)}
    for name, key in (("scope", "scope"), ("type", "type"), ("fact_key", "fact_key"), ("query", "q")):
        if name in data:
            filters[key] = data[name]
    if "metadata" in data:
        filters["metadata"] = json.dumps(data["metadata"], ensure_ascii=False)
    if "user_id" in data:
        if data.get("scope", "user") != "user":
            raise ValidationError("user_id lists the user's own memories (scope user); leave out scope.")
        filters.update(scope="user", scope_id=data["user_id"])
    queryset = memory_item_list(workspace=workspace, filters=filters)
    if "conversation_id" in data:
        conversation = conversation_get_or_404(workspace=workspace, external_id=data["conversation_id"])
        queryset = queryset.filter(_conversation_scopes(conversation))
    limit, offset = int(data.get("limit", LIST_DEFAULT_LIMIT)), int(data.get("offset", 0))
    total = queryset.count()
    items = list(queryset[offset : offset + limit])
    lines = [
        f"- {item.pk} [{item.type}, {item.scope}{' ' + item.scope_id if item.scope_id else ''}, {item.status}]"
        f"{' key ' + repr(item.fact_key) if item.fact_key else ''}: {item.content}"
        for item in items
    ]
    if items:
        header = f"Memories {offset + 1}-{offset + len(items)} of {total}:"
    else:
        header = f"No memories at offset {offset} ({total} match)." if total else "No memories match."
    if offset + len(items) < total:
        lines.append(f"(more: call list_memories again with offset={offset + len(items)})")
    output = {"data": MemoryItemOutputSerializer(items, many=True).data,
              "meta": {"total": total, "limit": limit, "offset": offset}}
    return ToolResult("list_memories", "\n".join([header, *lines]), output)


def _conversation_scopes(conversation) -> Q:
    """A conversation's own memories: its chat scope, its branches' scopes and its floors."""

    branch_prefix = json.dumps([conversation.external_id], ensure_ascii=False, separators=(",", ":"))[:-1] + ","
    return (
        Q(scope=Scope.CHAT, scope_id=conversation.external_id)
        | Q(scope=Scope.BRANCH, scope_id__startswith=branch_prefix)
        | Q(scope=Scope.FLOOR, scope_id__in=messages_of_conversation(conversation=conversation))
    )


_RUNNERS = {"recall": _recall, "remember": _remember, "forget": _forget, "list_memories": _list}
