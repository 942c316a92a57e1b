"""The `anthropic` memory tool (`memory_20250818`) backed by a memory store.

`/memories/<p>` is the store document `/<p>`; directories are the path
prefixes of documents. Results and error messages are the reference
implementation's (`BetaLocalFilesystemMemoryTool`), so a model sees the same
tool whichever backend runs it. A directory is reported with size 4K, as on
the filesystem the reference implementation runs on.

Each command is written once as a generator that yields HTTP calls and
receives their results; the sync and async tools drive it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Generator
from typing import Any

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError

import memory_client._operations as ops
from memory_client._transport import Call
from memory_client.errors import MemoryConflictError, MemoryNotFoundError, MemoryServiceError

ROOT = "/memories"
LINE_NUMBER_WIDTH = 6
DIRECTORY_SIZE = 4096
LIST_PAGE = 100

Steps = Generator[Call, Any, str]


def _format_size(size: int) -> str:
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    index = min((size.bit_length() - 1) // 10, len(units) - 1)
    value = size / (1024**index)
    return f"{int(value)}{units[index]}" if value == int(value) else f"{value:.1f}{units[index]}"


def _store_path(path: str) -> str:
    """The store path for a tool path ('' for the /memories root itself).

    The path is resolved under /memories itself, as the reference tool resolves
    it under its directory: `..` segments that climb out of /memories are
    refused, never clamped (normalising `/a/../../x` on its own would turn it
    into `/x`, a path inside the store)."""
    if not isinstance(path, str) or not path.startswith(ROOT):
        raise ToolError(f"Path must start with /memories, got: {path}")
    rest = path[len(ROOT):]
    if rest and not rest.startswith("/"):
        raise ToolError(f"Path must start with /memories, got: {path}")
    resolved = posixpath.normpath(f"{ROOT}/{rest.lstrip('/')}")
    if resolved != ROOT and not resolved.startswith(ROOT + "/"):
        raise ToolError(f"Path {path} would escape /memories directory")
    return resolved[len(ROOT):]


def _numbered(lines: list[str], start: int) -> str:
    return "\n".join(f"{str(number).rjust(LINE_NUMBER_WIDTH)}\t{line}" for number, line in enumerate(lines, start))


class _Commands:
    def __init__(self, store_id: str):
        self.store_id = store_id

    # --- Reads ------------------------------------------------------------------

    def _listing(self, prefix: str, depth: int) -> Generator[Call, Any, list[dict[str, Any]]]:
        items: list[dict[str, Any]] = []
        page = None
        while True:
            result = yield ops.list_store_memories(
                store_id=self.store_id, path_prefix=prefix, depth=depth, limit=LIST_PAGE, page=page
            )
            items.extend(result.data)
            if not result.next_cursor:
                return items
            page = result.next_cursor

    def _find(self, store_path: str) -> Generator[Call, Any, dict[str, Any] | None]:
        """The memory at this exact path (with content), or None."""
        parent = posixpath.dirname(store_path)
        prefix = parent if parent.endswith("/") else parent + "/"
        for item in (yield from self._listing(prefix, 1)):
            if item.get("type") == "memory" and item.get("path") == store_path:
                return (yield ops.get_store_memory(store_id=self.store_id, memory_id=item["id"], view="full"))
        return None

    def _is_directory(self, store_path: str) -> Generator[Call, Any, bool]:
        if not store_path:
            return True
        result = yield ops.list_store_memories(store_id=self.store_id, path_prefix=store_path + "/", limit=1)
        return bool(result.data)

    def view(self, path: str, view_range: list[int] | None) -> Steps:
        store_path = _store_path(path)
        memory = (yield from self._find(store_path)) if store_path else None
        if memory is not None:
            lines = (memory.get("content") or "").split("\n")
            start = 1
            if view_range and len(view_range) == 2:
                first = max(1, view_range[0]) - 1
                last = len(lines) if view_range[1] == -1 else view_range[1]
                lines, start = lines[first:last], first + 1
            return f"Here's the content of {path} with line numbers:\n" + _numbered(lines, start)
        if not (yield from self._is_directory(store_path)):
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        prefix = store_path + "/"
        entries: dict[str, int] = {}
        for item in (yield from self._listing(prefix, 2)):
            relative = item["path"][len(prefix):]
            parts = [part for part in relative.split("/") if part]
            if not parts or parts[0].startswith("."):
                continue
            entries[parts[0] + "/" if len(parts) > 1 or item.get("type") == "memory_prefix" else parts[0]] = (
                DIRECTORY_SIZE if len(parts) > 1 or item.get("type") == "memory_prefix" else item.get("content_size_bytes") or 0
            )
            if len(parts) > 1 and not parts[1].startswith("."):
                second = f"{parts[0]}/{parts[1]}"
                if item.get("type") == "memory_prefix":
                    entries[second + "/"] = DIRECTORY_SIZE
                else:
                    entries[second] = item.get("content_size_bytes") or 0
        lines = [f"{_format_size(DIRECTORY_SIZE)}\t{path}"]
        lines += [f"{_format_size(size)}\t{path.rstrip('/')}/{name}" for name, size in sorted(entries.items())]
        header = f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
        return header + "\n" + "\n".join(lines)

    # --- Writes -----------------------------------------------------------------

    def create(self, path: str, file_text: str) -> Steps:
        store_path = _store_path(path)
        if not store_path:
            raise ToolError(f"File {path} already exists")
        try:
            yield ops.write_store_memory(
                store_id=self.store_id, path=store_path, content=file_text, precondition={"type": "not_exists"}
            )
        except MemoryConflictError:
            raise ToolError(f"File {path} already exists")
        return f"File created successfully at: {path}"

    def _existing_file(self, path: str) -> Generator[Call, Any, dict[str, Any]]:
        store_path = _store_path(path)
        memory = (yield from self._find(store_path)) if store_path else None
        if memory is None:
            if (yield from self._is_directory(store_path)):
                raise ToolError(f"The path {path} is not a file.")
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        return memory

    def _replace(self, memory: dict[str, Any], content: str) -> Generator[Call, Any, None]:
        # Conditional on the content just read: a concurrent edit is reported, not overwritten.
        try:
            yield ops.update_store_memory(
                store_id=self.store_id,
                memory_id=memory["id"],
                content=content,
                precondition={"type": "content_sha256", "content_sha256": memory["content_sha256"]},
            )
        except MemoryConflictError:
            raise ToolError(f"The file {memory['path']} was changed concurrently; view it again and retry.")

    def str_replace(self, path: str, old_str: str, new_str: str) -> Steps:
        memory = yield from self._existing_file(path)
        content = memory.get("content") or ""
        count = content.count(old_str)
        if count == 0:
            raise ToolError(f"No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}.")
        if count > 1:
            lines, start = [], 0
            while (position := content.find(old_str, start)) != -1:
                lines.append(content[:position].count("\n") + 1)
                start = position + 1
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines: "
                f"{', '.join(map(str, lines))}. Please ensure it is unique"
            )
        changed_line = content[: content.find(old_str)].count("\n")
        new_content = content.replace(old_str, new_str)
        yield from self._replace(memory, new_content)
        new_lines = new_content.split("\n")
        first, last = max(0, changed_line - 2), min(len(new_lines), changed_line + 3)
        return (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            + _numbered(new_lines[first:last], first + 1)
        )

    def insert(self, path: str, insert_line: int, insert_text: str) -> Steps:
        memory = yield from self._existing_file(path)
        lines = (memory.get("content") or "").split("\n")
        if lines[-1] == "":
            lines.pop()
        if insert_line < 0 or insert_line > len(lines):
            raise ToolError(
                f"Invalid `insert_line` parameter: {insert_line}. It should be within the range [0, {len(lines)}]."
            )
        lines.insert(insert_line, insert_text.rstrip("\n"))
        new_content = "\n".join(lines)
        if not new_content.endswith("\n"):
            new_content += "\n"
        yield from self._replace(memory, new_content)
        return f"The file {path} has been edited."

    def delete(self, path: str) -> Steps:
        store_path = _store_path(path)
        if not store_path:
            raise ToolError("Cannot delete the /memories directory itself")
        memory = yield from self._find(store_path)
        targets = [memory] if memory is not None else [
            item for item in (yield from self._listing(store_path + "/", 0)) if item.get("type") == "memory"
        ]
        if not targets:
            raise ToolError(f"The path {path} does not exist")
        for target in targets:
            try:
                yield ops.delete_store_memory(store_id=self.store_id, memory_id=target["id"])
            except MemoryNotFoundError:
                continue  # deleted meanwhile: the outcome is the same
        return f"Successfully deleted {path}"

    def rename(self, old_path: str, new_path: str) -> Steps:
        old, new = _store_path(old_path), _store_path(new_path)
        if not old:
            raise ToolError("Cannot rename the /memories directory itself")
        if not new or (yield from self._find(new)) is not None or (yield from self._is_directory(new)):
            raise ToolError(f"The destination {new_path} already exists")
        memory = yield from self._find(old)
        moves = [(memory, new)] if memory is not None else [
            (item, new + item["path"][len(old):])
            for item in (yield from self._listing(old + "/", 0))
            if item.get("type") == "memory"
        ]
        if not moves:
            raise ToolError(f"The path {old_path} does not exist")
        for item, target in moves:
            try:
                yield ops.update_store_memory(store_id=self.store_id, memory_id=item["id"], path=target)
            except MemoryConflictError:
                raise ToolError(f"The destination {new_path} already exists")
        return f"Successfully renamed {old_path} to {new_path}"

    def clear_all(self) -> Steps:
        for item in (yield from self._listing("/", 0)):
            if item.get("type") == "memory":
                try:
                    yield ops.delete_store_memory(store_id=self.store_id, memory_id=item["id"])
                except MemoryNotFoundError:
                    continue
        return "All memory cleared"


def _drive_sync(client: Any, steps: Steps) -> str:
    result: Any = None
    error: BaseException | None = None
    while True:
        try:
            call = steps.throw(error) if error is not None else steps.send(result)
        except StopIteration as done:
            return done.value
        error = None
        try:
            result = client._run(call)
        except MemoryServiceError as exc:
            result, error = None, exc


async def _drive_async(client: Any, steps: Steps) -> str:
    result: Any = None
    error: BaseException | None = None
    while True:
        try:
            call = steps.throw(error) if error is not None else steps.send(result)
        except StopIteration as done:
            return done.value
        error = None
        try:
            result = await client._run(call)
        except MemoryServiceError as exc:
            result, error = None, exc


class MemoryStoreMemoryTool(BetaAbstractMemoryTool):
    """Sync `memory_20250818` tool for `client.beta.messages.tool_runner(...)`."""

    def __init__(self, client: Any, store_id: str, **kwargs: Any):
        super().__init__(**kwargs)
        self._client = client
        self._commands = _Commands(store_id)

    def _do(self, steps: Steps) -> str:
        return _drive_sync(self._client, steps)

    def view(self, command):
        return self._do(self._commands.view(command.path, command.view_range))

    def create(self, command):
        return self._do(self._commands.create(command.path, command.file_text))

    def str_replace(self, command):
        return self._do(self._commands.str_replace(command.path, command.old_str, command.new_str))

    def insert(self, command):
        return self._do(self._commands.insert(command.path, command.insert_line, command.insert_text))

    def delete(self, command):
        return self._do(self._commands.delete(command.path))

    def rename(self, command):
        return self._do(self._commands.rename(command.old_path, command.new_path))

    def clear_all_memory(self):
        return self._do(self._commands.clear_all())


class AsyncMemoryStoreMemoryTool(BetaAsyncAbstractMemoryTool):
    """Async twin for `AsyncAnthropic().beta.messages.tool_runner(...)`."""

    def __init__(self, client: Any, store_id: str, **kwargs: Any):
        super().__init__(**kwargs)
        self._client = client
        self._commands = _Commands(store_id)

    async def _do(self, steps: Steps) -> str:
        return await _drive_async(self._client, steps)

    async def view(self, command):
        return await self._do(self._commands.view(command.path, command.view_range))

    async def create(self, command):
        return await self._do(self._commands.create(command.path, command.file_text))

    async def str_replace(self, command):
        return await self._do(self._commands.str_replace(command.path, command.old_str, command.new_str))

    async def insert(self, command):
        return await self._do(self._commands.insert(command.path, command.insert_line, command.insert_text))

    async def delete(self, command):
        return await self._do(self._commands.delete(command.path))

    async def rename(self, command):
        return await self._do(self._commands.rename(command.old_path, command.new_path))

    async def clear_all_memory(self):
        return await self._do(self._commands.clear_all())
