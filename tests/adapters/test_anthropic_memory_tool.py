"""The memory tool driven by the `anthropic` SDK's own tool runner: a scripted
Messages API (an `httpx2.MockTransport`) asks for memory commands, the runner
calls our tool, the tool talks to the live server."""

from __future__ import annotations

import json

import httpx2
from anthropic import Anthropic
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool


def _scripted_api(commands: list[dict]):
    """A fake Messages API: one tool_use per command, then a final text answer.
    Records the tool results the runner sends back."""
    results: list[dict] = []
    calls = [0]

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        for message in body["messages"]:
            if message["role"] == "user" and isinstance(message["content"], list):
                for block in message["content"]:
                    if block.get("type") == "tool_result" and block not in results:
                        results.append(block)
        # The runner may send only the new messages of a turn, so count requests.
        step = calls[0]
        calls[0] += 1
        if step < len(commands):
            content = [{"type": "tool_use", "id": f"toolu_{step}", "name": "memory", "input": commands[step]}]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": "done"}], "end_turn"
        return httpx2.Response(200, json={
            "id": f"msg_{step}", "type": "message", "role": "assistant", "model": "claude-test",
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        })

    return handler, results


COMMANDS = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/notes/kyoto.md", "file_text": "Day 1: Fushimi\nDay 2: Arashiyama\n"},
    {"command": "create", "path": "/memories/notes/kyoto.md", "file_text": "again"},
    {"command": "str_replace", "path": "/memories/notes/kyoto.md", "old_str": "Arashiyama", "new_str": "Gion"},
    {"command": "str_replace", "path": "/memories/notes/kyoto.md", "old_str": "Day", "new_str": "D"},
    {"command": "insert", "path": "/memories/notes/kyoto.md", "insert_line": 0, "insert_text": "# Trip"},
    {"command": "view", "path": "/memories/notes/kyoto.md", "view_range": [2, -1]},
    {"command": "create", "path": "/memories/notes/deep/er/x.md", "file_text": "x"},
    {"command": "view", "path": "/memories"},
    {"command": "rename", "old_path": "/memories/notes/kyoto.md", "new_path": "/memories/trips/kyoto.md"},
    {"command": "view", "path": "/memories/notes/kyoto.md"},
    {"command": "delete", "path": "/memories/notes"},
    {"command": "delete", "path": "/memories"},
    {"command": "view", "path": "/etc/passwd"},
    {"command": "view", "path": "/memories/trips/kyoto.md"},
]


def _run(tool, commands):
    handler, results = _scripted_api(commands)
    anthropic = Anthropic(api_key="test", base_url="http://api.test", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    runner = anthropic.beta.messages.tool_runner(
        model="claude-test", max_tokens=100, tools=[tool], messages=[{"role": "user", "content": "remember"}]
    )
    final = runner.until_done()
    assert final.content[0].text == "done"
    return [(r.get("is_error", False), r["content"] if isinstance(r["content"], str) else r["content"][0]["text"]) for r in results]


def test_tool_runner_drives_the_store_backed_tool_like_the_reference(client, tmp_path):
    store = client.create_store(name="agent notes")
    ours = _run(client.anthropic_memory_tool(store["id"]), COMMANDS)
    reference = _run(BetaLocalFilesystemMemoryTool(base_path=str(tmp_path)), COMMANDS)
    assert len(ours) == len(COMMANDS)
    assert ours == reference
    assert ours[1] == (False, "File created successfully at: /memories/notes/kyoto.md")
    assert ours[2][0] is True and "already exists" in ours[2][1]
    assert ours[6][1].splitlines()[1:] == ["     2\tDay 1: Fushimi", "     3\tDay 2: Gion", "     4\t"]

    memories = list(client.iter_store_memories(store_id=store["id"], view="full"))
    assert [(m["path"], m["content"]) for m in memories] == [("/trips/kyoto.md", "# Trip\nDay 1: Fushimi\nDay 2: Gion\n")]
    versions = client.list_store_memory_versions(store_id=store["id"]).data
    assert {v["operation"] for v in versions} >= {"created", "modified", "deleted"}


ESCAPES = [
    {"command": "view", "path": "/memories/a/../../escape.md"},
    {"command": "view", "path": "/memories/.."},
    {"command": "create", "path": "/memories/a/../../escape.md", "file_text": "out"},
    {"command": "create", "path": "/memories/../memories/../escape.md", "file_text": "out"},
    {"command": "str_replace", "path": "/memories/a/../../escape.md", "old_str": "o", "new_str": "0"},
    {"command": "insert", "path": "/memories/a/../../escape.md", "insert_line": 0, "insert_text": "x"},
    {"command": "delete", "path": "/memories/a/../../escape.md"},
    {"command": "rename", "old_path": "/memories/a/../../escape.md", "new_path": "/memories/b.md"},
    {"command": "create", "path": "/memories/inside.md", "file_text": "in"},
    {"command": "rename", "old_path": "/memories/inside.md", "new_path": "/memories/x/../../../escape.md"},
    # Climbing back inside stays inside, as with the reference.
    {"command": "create", "path": "/memories/a/../b.md", "file_text": "b"},
    {"command": "view", "path": "/memories/a/../b.md"},
    {"command": "view", "path": "/memories"},
]


def test_paths_escaping_memories_are_refused_for_every_command(client, tmp_path):
    store = client.create_store(name="escape attempts")
    ours = _run(client.anthropic_memory_tool(store["id"]), ESCAPES)
    reference = _run(BetaLocalFilesystemMemoryTool(base_path=str(tmp_path / "ref")), ESCAPES)
    assert ours == reference
    refused = [text for is_error, text in ours[:8]] + [ours[9][1]]
    assert refused[0] == "Path /memories/a/../../escape.md would escape /memories directory"
    assert all(text.endswith("would escape /memories directory") for text in refused), refused
    paths = sorted(item["path"] for item in client.iter_store_memories(store_id=store["id"]) if item["type"] == "memory")
    assert paths == ["/b.md", "/inside.md"]
