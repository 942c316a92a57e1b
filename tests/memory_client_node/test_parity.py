"""The two clients keep one surface: every public method of the Python
`MemoryClient` exists on the Node `MemoryClient` under its camelCase name,
and the reverse, so a method added on one side only fails here."""

from __future__ import annotations

import json
import subprocess

from memory_client import MemoryClient

# Where spec 000's Node name is not the plain camelCase of the Python one.
NODE_NAMES = {"to_openai_input": "toOpenAIInput"}
# Adapters of frameworks that exist for Python only (CrewAI ships no Node package).
PYTHON_ONLY = {"crewai_memory", "crewai_storage"}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return NODE_NAMES.get(name, head + "".join(part.title() for part in rest))


def _node_methods(package) -> set[str]:
    script = (
        "const { MemoryClient } = await import('./dist/index.js');"
        "const names = new Set();"
        "for (let p = MemoryClient.prototype; p !== Object.prototype; p = Object.getPrototypeOf(p))"
        "  for (const n of Object.getOwnPropertyNames(p)) if (n !== 'constructor' && !n.startsWith('#')) names.add(n);"
        "console.log(JSON.stringify([...names]));"
    )
    completed = subprocess.run(["node", "--input-type=module", "-e", script], cwd=package, capture_output=True,
                               text=True, timeout=120, check=True)
    return set(json.loads(completed.stdout))


def test_python_and_node_clients_have_the_same_methods(node_package):
    python = {name for name in dir(MemoryClient) if not name.startswith("_")}
    python.discard("config")
    python -= PYTHON_ONLY
    expected = {_camel(name) for name in python}
    node = _node_methods(node_package)
    assert not expected - node, f"missing from the Node client: {sorted(expected - node)}"
    assert not node - expected, f"missing from the Python client: {sorted(node - expected)}"


def test_camel_case_names():
    assert _camel("append_message") == "appendMessage"
    assert _camel("to_anthropic_messages") == "toAnthropicMessages"
    assert _camel("to_openai_input") == "toOpenAIInput"
    assert _camel("iter_store_memories") == "iterStoreMemories"
