"""DeepAgents on the LangGraph adapters, against a live server: a deep agent
writes a file in one process; a new agent in another process resumes the
thread from its checkpoint and reads the file back; the file is a document of
the workspace's `langgraph` memory store, seen through the API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adapters.deep_agent_process import PLAN

pytestmark = pytest.mark.slow  # starts processes of its own

REPO = Path(__file__).resolve().parents[2]


def _turn(base_url: str, key: str, phase: str) -> dict:
    completed = subprocess.run(
        [sys.executable, "-m", "tests.adapters.deep_agent_process", "--base-url", base_url, "--api-key", key,
         "--thread", "deep-trip", "--phase", phase],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=240,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_deep_agent_files_and_thread_survive_the_process(live_server, api_key, client, admin_client):
    first = _turn(live_server.url, api_key, "write")
    assert first["final"] == "I saved the plan to /notes/plan.md."
    assert any("plan.md" in result for result in first["tool_results"])

    second = _turn(live_server.url, api_key, "read")
    # The new process resumed the thread: the model saw the first turn first.
    seen = second["first_call_seen"]
    assert seen[0] == ["human", "Plan my trip and save it."]
    assert ["ai", "I saved the plan to /notes/plan.md."] in seen
    assert seen[-1] == ["human", "What does my plan say?"]
    # And read back the file the other process wrote.
    assert any("fly to Lisbon on May 3" in result for result in second["tool_results"])
    assert second["final"] == "The plan: fly to Lisbon on May 3."

    # The file is a document of the `langgraph` memory store.
    store = next(s for s in client.list_stores().data if s["name"] == "langgraph")
    documents = {m["path"]: m for m in client.iter_store_memories(store_id=store["id"])}
    path = next(p for p in documents if p.startswith("/filesystem/") and "plan.md" in p)
    full = client.get_store_memory(store_id=store["id"], memory_id=documents[path]["id"], view="full")
    assert "fly to Lisbon on May 3" in full["content"]
    # The thread's checkpoints are kept by the service too.
    assert client.get_conversation(conversation_id="deep-trip").conversation_id == "deep-trip"
    assert PLAN.splitlines()[1] in full["content"]
    # Operators find it in the review console like any other memory.
    page = admin_client.get("/admin/memories/memoryitem/", {"q": "fly to Lisbon"})
    assert page.status_code == 200 and documents[path]["id"] in page.content.decode()
