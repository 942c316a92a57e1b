"""The Node package's own tests (`node --test`), each file in a workspace of
its own, against the live test server: the client, the adapters inside their
frameworks (the Claude Agent SDK, OpenAI Agents, LangGraph.js and its
checkpointer conformance suite, DeepAgents) and MCP."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

# Node processes against a live server: minutes, not seconds (`make test-quick` leaves them out).
pytestmark = pytest.mark.slow


# About two minutes on an idle machine (most of it the conformance suite); the
# limits leave room for a busy one.
@pytest.mark.timeout(900)
def test_node_package_tests_pass(live_server, new_key, node_package):
    files = sorted(path.name for path in (node_package / "test").glob("*.test.mjs"))
    assert files
    keys = {name: new_key() for name in files}
    env = {**os.environ, "MEMORY_BASE_URL": live_server.url, "MEMORY_TEST_KEYS": json.dumps(keys)}
    completed = subprocess.run(
        ["node", "--test", "--test-concurrency=2", "--test-reporter=tap", *(f"test/{name}" for name in files)],
        cwd=node_package, env=env, capture_output=True, text=True, timeout=840,
    )
    summary = [line for line in completed.stdout.splitlines() if line.startswith(("# pass", "# fail", "not ok"))]
    assert completed.returncode == 0, "\n".join(summary) + "\n" + completed.stdout[-6000:] + completed.stderr[-3000:]
    assert "# fail 0" in completed.stdout
