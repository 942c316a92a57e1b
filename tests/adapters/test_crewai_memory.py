"""CrewAI's memory kept by the service, against a live server: a crew with a
scripted model runs in crewai's own environment (`.venv-crewai`, made by
`make crewai-deps`: crewai pins openai, pydantic and mcp older than the
service's), in processes of its own. What it learns lands in the crew's scope,
a later crew finds it by meaning, the API's search finds it with no word in
common, and operators see it in the review console."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.adapters.crew_data import CREW, FACT, QUERY, TASKS
from tests.memories.pipeline_helpers import eager_celery

pytestmark = pytest.mark.slow  # starts processes of its own

REPO = Path(__file__).resolve().parents[2]
CREWAI_PYTHON = REPO / ".venv-crewai" / "bin" / "python"
CREW_SCOPE = "crew:billing-crew"


@pytest.fixture
def crewai_python() -> Path:
    if not CREWAI_PYTHON.exists():
        pytest.skip("crewai's environment is needed: run `make crewai-deps`")
    return CREWAI_PYTHON


@pytest.fixture
def meaning(settings):
    """Recall's embedding model on, and the vectors written as each memory
    is (the task runs in the request, after its commit)."""
    settings.EMBEDDING_PROVIDER = "offline"
    with eager_celery():
        yield


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def _run(python: Path, module: str, *args: str, data_dir: Path) -> dict:
    """Runs a script of this folder in crewai's environment; its last line of output is JSON.
    crewai keeps files of its own (task outputs, first-run markers, a key)
    under the user's home and data directories: here a temporary one. No terminal: crewai asks no
    questions."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(data_dir), "XDG_DATA_HOME": str(data_dir),
           "CREWAI_STORAGE_DIR": str(data_dir / "crewai")}
    completed = subprocess.run([str(python), "-m", module, *args], cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-4000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _crew(python: Path, base_url: str, key: str, phase: str, data_dir: Path) -> dict:
    return _run(python, "tests.adapters.crew_process", "--base-url", base_url, "--api-key", key, "--phase", phase,
                data_dir=data_dir)


def test_a_crew_remembers_through_the_service_and_recalls_by_meaning(
        crewai_python, meaning, live_server, api_key, client, admin_client, tmp_path):
    assert not _words(QUERY) & _words(FACT) and not _words(TASKS["use"][0]) & _words(FACT)

    learned = _crew(crewai_python, live_server.url, api_key, "learn", tmp_path)
    assert learned["answer"] == f"Dana told us: {FACT}"
    # crewai extracted the fact from the result and saved it under the agent's
    # scope in the crew, with the importance its analysis gave.
    scope = "/crew/billing-crew/agent/billing-clerk/customers"
    assert [(m["content"], m["scope"], m["importance"]) for m in learned["recalled"]] == [(FACT, scope, 0.8)]

    kept = client.list_memories(user_id=CREW_SCOPE).data
    assert [(m["content"], m["type"], m["fact_key"], m["importance"]) for m in kept] == [(FACT, "fact", scope, 0.8)]
    assert kept[0]["id"] == learned["recalled"][0]["id"]
    # The service's own search finds it by meaning, with no word in common.
    found = client.search_memories(query=QUERY, user_id=CREW_SCOPE).data
    assert found[0]["id"] == kept[0]["id"] and found[0]["score"] > 0

    # A new crew of the same name: its task shares no word with the fact, and
    # the memory crewai recalls for it is put in front of the model.
    used = _crew(crewai_python, live_server.url, api_key, "use", tmp_path)
    assert used["answer"] == "The paperwork is ready."
    assert len(used["task_prompts"]) == 1 and FACT in used["task_prompts"][0]
    # Its result held nothing worth keeping: still the one memory.
    assert [m["id"] for m in client.list_memories(user_id=CREW_SCOPE).data] == [kept[0]["id"]]

    # Operators find the crew's memory in the review console.
    page = admin_client.get("/admin/memories/memoryitem/", {"q": "invoices"})
    assert page.status_code == 200 and kept[0]["id"] in page.content.decode()
    change = admin_client.get(f"/admin/memories/memoryitem/{kept[0]['id']}/change/")
    assert change.status_code == 200 and FACT in change.content.decode() and CREW_SCOPE in change.content.decode()
    assert CREW == "Billing crew"


def test_the_storage_keeps_crewai_s_backend_contract(crewai_python, meaning, live_server, api_key, client, tmp_path):
    out = _run(crewai_python, "tests.adapters.crewai_storage_process", "--base-url", live_server.url,
               "--api-key", api_key, data_dir=tmp_path)
    assert out["is_backend"]
    tea, office, trip = out["ids"]
    # Records take the service's ids and their scopes as kept.
    assert all(i.startswith("mem_") for i in out["ids"])
    assert out["scopes"] == ["/crew/c/agent/x", "/crew/c/agent/y", "/crew/c"]
    # By meaning, in the crew's scope only, under a scope prefix, with its score.
    assert out["search"][0] == tea and out["search_scores"][0] > 0
    assert out["search_other_crew"] == ["Ana drinks coffee"]
    assert out["search_prefix"] == [office] and out["search_prefix_elsewhere"] == []
    assert out["asearch"] == [tea]
    # A text longer than the service's query limit is searched by its start.
    assert out["search_long_text"] == [tea]
    # Categories (any of them), metadata (every key) and the source are kept and filter as crewai's
    # own storages filter; a score above 1 matches nothing.
    assert out["search_categories"] == [tea] and out["search_categories_other"] == []
    assert out["search_metadata"] == [tea] and out["search_metadata_other"] == []
    assert out["search_min_score"] == []
    assert "its own embedder" in out["foreign_vector"]
    assert out["get"] == ["Ana drinks green tea every morning", "/crew/c/agent/x", 0.9, ["drinks", "habits"],
                          {"person": "Ana", "confirmed": True}, "interview"]
    assert out["get_unknown"] is None and out["get_other_crew"] is None
    assert out["updated"] == "Ana drinks jasmine tea every morning"
    assert out["list"] == [trip, office, tea] and out["list_page"] == [office]
    assert out["list_prefix"] == [office, tea]
    assert out["list_scopes"] == {"/": ["/crew"], "/crew/c": ["/crew/c/agent"],
                                  "/crew/c/agent": ["/crew/c/agent/x", "/crew/c/agent/y"], "/crew/c/agent/x": []}
    assert out["scope_info"] == ["/crew/c/agent", 2, ["/crew/c/agent/x", "/crew/c/agent/y"], True]
    assert out["count"] == [3, 2, 0]
    assert out["list_categories"] == {"drinks": 1, "habits": 1, "work": 1}
    assert out["scope_categories"] == ["drinks", "habits", "work"]
    assert out["delete_category_none"] == 0
    assert "no per-source privacy" in out["private"]
    assert out["delete_ids"] == 1 and out["delete_prefix"] == 1 and out["after_delete"] == ["Ben flies to Porto in May"]
    # A reset erases this crew's memories, not another's.
    assert out["after_reset"] == [0, 1]
    assert [m["content"] for m in client.list_memories(user_id="crew:other").data] == ["Ana drinks coffee"]
    assert client.list_memories(user_id="crew:contract").total == 0
