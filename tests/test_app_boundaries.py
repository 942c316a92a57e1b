"""The import rules between the apps, read from the source (no module is run).

The layers, lowest first:

- `accounts` and `memory_project` (workspaces, keys, settings, shared
  plumbing) and `memory_client` (the Python client, which imports no Django).
- `conversations`: conversations, branches, messages. It imports nothing from
  the apps above it (`memories`, `framework_state`, `agent_tools`): what they
  learn from it they learn from its signals (`conversations.hooks`).
- `memories` (and `agent_tools`, which sits above it): they read and write
  conversations only through its public modules: its selectors
  (`conversations.selectors...`), its services (`conversations.services...`)
  and its signals (`conversations.hooks`). Two layers of their own build on
  the matching layer of conversations: an admin module may import
  `conversations.admin`, an API module (views, schema) `conversations.views`
  and `conversations.schema`. `conversations.models` is imported only for
  annotations (under `if TYPE_CHECKING:`); a foreign key names its model by
  label (`"conversations.Conversation"`).
- `framework_state` (framework checkpoints, sessions and stores) sits on top,
  beside `agent_tools`.

Everywhere: no import circle between project modules (module-level imports;
annotations-only imports do not count), and an import of a project module
inside a function only where Django's app loading or Celery's task dispatch
needs it, said in a comment on the import or in the lines just above it.
Migrations are left out (their `RunPython` functions import at run time by
Django's own convention).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = {"tests", "bench", "node_modules", "var", "migrations", "templates", "docs"}
# A comment this many lines above a function-local import (or on it) gives its reason.
REASON_LINES = 3

PUBLIC_OF_CONVERSATIONS = ("conversations.selectors", "conversations.services", "conversations.hooks")
LAYER_OF_CONVERSATIONS = {
    "admin": ("conversations.admin",),
    "views": ("conversations.views", "conversations.schema"),
    "schema": ("conversations.views", "conversations.schema"),
}
ABOVE_CONVERSATIONS = ("memories", "framework_state", "agent_tools")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the imported project module
    line: int
    local: bool  # inside a function
    typing_only: bool  # under `if TYPE_CHECKING:`


def _packages() -> list[str]:
    return sorted(p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name not in SKIP
                  and ((p / "__init__.py").exists() or (p / "apps.py").exists()))


def _modules() -> dict[str, Path]:
    modules = {}
    for package in _packages():
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if any(part in SKIP or part.startswith(".") for part in parts):
                continue
            name = ".".join(parts)
            modules[name.removesuffix(".__init__")] = path
    return modules


MODULES = _modules()
PACKAGES = set(_packages())


def _resolve(name: str) -> str | None:
    """The project module an import names (an imported name falls back to its module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(module: str, path: Path) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    base = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(node: ast.AST, *, local: bool, typing_only: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                if isinstance(child, ast.Import):
                    names = [alias.name for alias in child.names]
                else:
                    prefix = child.module or ""
                    if child.level:
                        anchor = base
                        for _ in range(child.level - 1):
                            anchor = anchor.rpartition(".")[0]
                        prefix = f"{anchor}.{prefix}" if child.module else anchor
                    names = [f"{prefix}.{alias.name}" for alias in child.names]
                for name in names:
                    if name.split(".")[0] not in PACKAGES:
                        continue
                    target = _resolve(name)
                    if target and target != module:
                        yield Import(module, target, child.lineno, local, typing_only)
            else:
                yield from visit(
                    child,
                    local=local or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda),
                    typing_only=typing_only or (isinstance(child, ast.If) and _is_type_checking(child)),
                )

    yield from visit(tree, local=False, typing_only=False)


IMPORTS = [found for module, path in MODULES.items() for found in _imports(module, path)]


def _within(target: str, prefixes: tuple[str, ...]) -> bool:
    return any(target == prefix or target.startswith(prefix + ".") for prefix in prefixes)


def _import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for found in IMPORTS:
        if not found.local and not found.typing_only:
            graph[found.module].add(found.target)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = 0

    def strong(start: str) -> None:
        # Iterative, so a deep chain of imports needs no recursion limit.
        nonlocal counter
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            strong(module)
    return circles


def _where(found: Import) -> str:
    return f"{MODULES[found.module].relative_to(ROOT)}:{found.line} imports {found.target}"


def test_the_rules_see_the_apps():
    assert {"accounts", "conversations", "memories", "framework_state", "agent_tools", "memory_project"} <= PACKAGES
    assert any(found.module.startswith("memories") and found.target.startswith("conversations.selectors")
               for found in IMPORTS)


def test_no_import_circles():
    assert _circles(_import_graph()) == []


def test_conversations_imports_nothing_above_it():
    wrong = [_where(found) for found in IMPORTS
             if found.module.split(".")[0] == "conversations" and found.target.split(".")[0] in ABOVE_CONVERSATIONS]
    assert wrong == []


def _allowed_from_conversations(found: Import) -> bool:
    if found.typing_only or _within(found.target, PUBLIC_OF_CONVERSATIONS):
        return True
    layer = found.module.split(".")
    return any(part in LAYER_OF_CONVERSATIONS and _within(found.target, LAYER_OF_CONVERSATIONS[part])
               for part in layer[1:])


def test_memories_and_agent_tools_read_conversations_through_its_public_modules():
    wrong = [_where(found) for found in IMPORTS
             if found.module.split(".")[0] in ("memories", "agent_tools")
             and found.target.split(".")[0] == "conversations" and not _allowed_from_conversations(found)]
    assert wrong == []


def test_function_local_imports_say_why():
    lines = {module: path.read_text(encoding="utf-8").splitlines() for module, path in MODULES.items()}
    silent = []
    for found in IMPORTS:
        if not found.local:
            continue
        text = lines[found.module]
        nearby = text[max(0, found.line - 1 - REASON_LINES): found.line]
        if not any("#" in line for line in nearby):
            silent.append(_where(found))
    assert silent == []


def test_the_rules_catch_what_they_forbid(tmp_path):
    """The checks read what they are meant to: a circle, an upward import, a
    model import and a silent function-local import are each found."""
    source = (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import conversations.models\n"
        "if TYPE_CHECKING:\n"
        "    from conversations.models import Message\n"
        "def f():\n"
        "    import memories.tasks\n"
    )
    path = tmp_path / "probe.py"
    path.write_text(source)
    MODULES["memories.probe"] = path
    try:
        found = list(_imports("memories.probe", path))
    finally:
        del MODULES["memories.probe"]
    by_line = {item.line: item for item in found}
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert not _allowed_from_conversations(by_line[3])
    assert by_line[5].typing_only and _allowed_from_conversations(by_line[5])
    assert by_line[7].local and by_line[7].target == "memories.tasks"
