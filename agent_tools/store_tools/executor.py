"""Running the agent's memory tools against a store.

HTTP-level failures (unknown tool or store, a read-only key or attachment
asked to write) raise domain errors. Everything the model can fix itself (bad
input, a missing path, an `old_str` that is not unique, a concurrent change, an
archived store) comes back as a result with `is_error: true`, like the
reference memory tool's `ToolError`, so an agent loop can hand it straight
back to the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

import memories.services.store_memories as services
from accounts.actors import Actor
from agent_tools.store_tools.definitions import ToolSpec, tool_spec
from memories.models import MemoryItem, MemoryStore
from memories.paths import normalize_path, normalize_prefix
from memories.search import search_filter
from memories.selectors.stores import MemoryPrefix, memory_get_by_path, memory_list
from memories.services.lineage.routes import store_memory_delete_following_lineage
from memory_project.errors import DomainError, NotFoundError, PermissionDeniedError

SEARCH_DEFAULT_LIMIT = 10
SEARCH_MAX_LIMIT = 50
LIST_PAGE_SIZE = 100
# Lines quoted per matching memory: enough to judge relevance, short enough
# that a search result never rivals reading the files.
SEARCH_LINES_PER_MEMORY = 3
_JSON_TYPES = {"string": str, "integer": int, "array": list, "object": dict}


class ToolInputError(DomainError):
    code = "invalid_request_error"


@dataclass
class ToolResult:
    name: str
    content: str
    output: dict[str, Any] = field(default_factory=dict)
    error: dict[str, str] | None = None

    def to_wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": "tool_result",
            "tool_name": self.name,
            "is_error": self.error is not None,
            "content": self.content,
            "output": self.output,
        }
        if self.error is not None:
            body["error"] = self.error
        return body


def validate_tool_input(spec: ToolSpec, data: Any) -> dict[str, Any]:
    schema = spec.parameters
    if not isinstance(data, dict):
        raise ToolInputError("input must be an object.")
    unknown = set(data) - set(schema["properties"])
    if unknown:
        raise ToolInputError(f"Unknown input field(s): {', '.join(sorted(unknown))}.")
    for name in schema.get("required", []):
        if name not in data:
            raise ToolInputError(f"input.{name} is required.")
    for name, value in data.items():
        prop = schema["properties"][name]
        expected = _JSON_TYPES[prop["type"]]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ToolInputError(f"input.{name} must be of type {prop['type']}.")
        if expected is str and len(value) < prop.get("minLength", 0):
            raise ToolInputError(f"input.{name} must not be empty.")
        if expected is int and not prop.get("minimum", value) <= value <= prop.get("maximum", value):
            raise ToolInputError(f"input.{name} is out of range.")
        if expected is list and not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise ToolInputError(f"input.{name} must hold integers.")
    return data


def _numbered(text: str, start: int = 1) -> str:
    return "\n".join(f"{number:6d}\t{line}" for number, line in enumerate(text.split("\n"), start))


def _require(store: MemoryStore, path: str) -> MemoryItem:
    item = memory_get_by_path(store=store, path=path)
    if item is None:
        raise NotFoundError(f"The path {path} does not exist. Please provide a valid path.")
    return item


def _list(store: MemoryStore, data: dict[str, Any], actor: Actor) -> ToolResult:
    prefix = normalize_prefix(data.get("path_prefix", "/"))
    page = memory_list(store=store, prefix=prefix, depth=data.get("depth", 0), limit=LIST_PAGE_SIZE, page=data.get("page"))
    entries = []
    lines = []
    for entry in page.items:
        if isinstance(entry, MemoryPrefix):
            entries.append({"type": "memory_prefix", "path": entry.path})
            lines.append(f"-\t{entry.path}")
        else:
            entries.append({"type": "memory", "path": entry.path, "content_size_bytes": entry.content_size_bytes})
            lines.append(f"{entry.content_size_bytes}\t{entry.path}")
    header = f"Memories under {prefix} (size in bytes, then path; directories end with /):" if lines else f"No memories under {prefix}."
    if page.next_page:
        lines.append(f"(more: call memory_list again with page={page.next_page})")
    return ToolResult("memory_list", "\n".join([header, *lines]), {"entries": entries, "next_page": page.next_page})


def _search(store: MemoryStore, data: dict[str, Any], actor: Actor) -> ToolResult:

    query = data["query"]
    limit = data.get("limit", SEARCH_DEFAULT_LIMIT)
    base = MemoryItem.objects.filter(store=store)
    prefix = normalize_prefix(data.get("path_prefix", "/"))
    if prefix != "/":
        base = base.filter(path__startswith=prefix)
    by_content = search_filter(base, query).values("pk")
    rows = list(base.filter(Q(pk__in=by_content) | Q(path__icontains=query)).order_by("path")[:limit])
    needle = query.casefold()
    matches = []
    lines = []
    for item in rows:
        hits = [
            {"line": number, "text": line}
            for number, line in enumerate(item.content.split("\n"), 1)
            if needle in line.casefold()
        ][:SEARCH_LINES_PER_MEMORY]
        matches.append({"path": item.path, "lines": hits})
        lines.append(item.path)
        lines.extend(f"  {hit['line']}: {hit['text']}" for hit in hits)
    text = f"{len(rows)} memor{'y' if len(rows) == 1 else 'ies'} matching {query!r}:" if rows else f"No memory matches {query!r}."
    return ToolResult("memory_search", "\n".join([text, *lines]), {"matches": matches})


def _read(store: MemoryStore, data: dict[str, Any], actor: Actor) -> ToolResult:
    path = normalize_path(data["path"])
    item = _require(store, path)
    lines = item.content.split("\n")
    start, end = 1, len(lines)
    if "view_range" in data:
        start, end = data["view_range"]
        end = len(lines) if end == -1 else end
        if not (1 <= start <= len(lines) and start <= end <= len(lines)):
            raise ToolInputError(f"view_range must lie within lines 1..{len(lines)} of {path}.")
    body = _numbered("\n".join(lines[start - 1 : end]), start)
    output = {"path": path, "content": item.content, "content_sha256": item.content_sha256, "version": item.version}
    return ToolResult("memory_read", f"Here's the content of {path} with line numbers:\n{body}", output)


def _write(store: MemoryStore, data: dict[str, Any], actor: Actor) -> ToolResult:
    item, operation = services.store_memory_write(
        workspace=store.workspace_id, store_id=store.pk, path=data["path"], content=data["content"], actor=actor
    )
    if operation == "created":
        text = f"File created successfully at: {item.path}"
    elif operation == "modified":
        text = f"File {item.path} has been overwritten."
    else:
        text = f"File {item.path} already had this content; nothing changed."
    return ToolResult("memory_write", text, _memory_output(item, operation))


def _edit(store: MemoryStore, data: dict[str, Any], actor: Actor) -> ToolResult:
    path = normalize_path(data["path"])
    item = _require(store, path)
    old, new = data["old_str"], data["new_str"]
    count = item.content.count(old)
    if count == 0:
        raise ToolInputError(f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}.")
    if count > 1:
        starts = [i for i in range(len(item.content)) if item.content.startswith(old, i)]
        numbers = sorted({item.content.count("\n", 0, i) + 1 for i in starts})
        raise ToolInputError(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
            f"{', '.join(map(str, numbers))}. Please ensure it is unique"
        )
    content = item.content.replace(old, new, 1)
    # Conditional on the content just read: a concurrent write makes this a
    # precondition failure instead of silently losing that write.
    updated = services.store_memory_update(
        workspace=store.workspace_id,
        store_id=store.pk,
        memory_id=item.pk,
        content=content,
        precondition={"type": "content_sha256", "content_sha256": item.content_sha256},
        actor=actor,
    )
    line = item.content.count("\n", 0, item.content.index(old)) + 1
    snippet_lines = content.split("\n")
    first = max(1, line - 2)
    last = min(len(snippet_lines), line + new.count("\n") + 2)
    snippet = _numbered("\n".join(snippet_lines[first - 1 : last]), first)
    text = f"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{snippet}"
    return ToolResult("memory_edit", text, _memory_output(updated, "modified"))


def _delete(store: MemoryStore, data: dict[str, Any], actor: Actor) -> ToolResult:
    path = normalize_path(data["path"])
    item = _require(store, path)
    store_memory_delete_following_lineage(workspace=store.workspace_id, store_id=store.pk, memory_id=item.pk,
                                          actor=actor)
    return ToolResult("memory_delete", f"Successfully deleted {path}", {"path": path, "id": item.pk})


def _memory_output(item: MemoryItem, operation: str | None) -> dict[str, Any]:
    return {
        "id": item.pk,
        "path": item.path,
        "operation": operation,
        "content_sha256": item.content_sha256,
        "content_size_bytes": item.content_size_bytes,
        "version": item.version,
        "memory_version_id": item.current_version_id,
    }


_RUNNERS = {
    "memory_list": _list,
    "memory_search": _search,
    "memory_read": _read,
    "memory_write": _write,
    "memory_edit": _edit,
    "memory_delete": _delete,
}


def memory_tool_execute(
    *, store: MemoryStore, name: str, tool_input: Any, actor: Actor, can_write: bool, denial: str = ""
) -> ToolResult:
    """Run tool `name` on `store`. `can_write` is False for a read-only key or a
    `read_only` attachment: write tools then raise PermissionDeniedError (403)."""
    spec = tool_spec(name)
    if spec is None:
        raise NotFoundError(f"No memory tool '{name}'.")
    if spec.writes and not can_write:
        raise PermissionDeniedError(denial or f"{name} writes, and this caller may only read memory store '{store.pk}'.")
    try:
        data = validate_tool_input(spec, tool_input)
        return _RUNNERS[name](store, data, actor)
    except PermissionDeniedError:
        raise
    except DomainError as exc:
        return ToolResult(name, exc.message, {}, {"type": exc.code, "message": exc.message})
