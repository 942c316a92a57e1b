"""An extraction that read a floor before its erasure writes nothing made of
it after: the erasure moves its scopes' `erasure_generation` under their
locks, and the extraction writes only if the generation it read its floors
under is still the one under its own lock (else it reads them again).

The model is the scripted one (bench/llm_double.py) behind an
OpenAI-compatible endpoint that holds its answer until the test has erased
the message: in process (both databases), and over HTTP to a real Celery
worker on PostgreSQL and Redis."""

from __future__ import annotations

import json
import os
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.test import override_settings

from memories.models import JobKind, MemoryItem, MemoryJob, ScopeState
from memories.services.jobs import memory_job_enqueue
from memories.services.scopes import branch_scope_id
from tests.celery_worker import start_worker, wait_for, worker_database_url
from tests.memories.pipeline_helpers import ScriptedModel, _llm_double, eager_celery
from tests.memories.test_lineage import export_text, tables_holding

SECRET = "8807341"
MESSAGES = [
    {"role": "user", "content": "I need to water the fern on the balcony."},
    {"role": "user", "content": f"My locker code is {SECRET}."},
    {"role": "user", "content": "I also need to call the plumber tomorrow."},
    {"role": "assistant", "content": "Noted, both of them."},
]
# No extraction starts on its own: the test queues the one it races.
QUIET = {"MEMORY_EXTRACT_MIN_FLOORS": 1000, "MEMORY_EXTRACT_MIN_TOKENS": 10**6, "MEMORY_EXTRACT_BATCH_FLOORS": 10}


def _append(api, cid: str) -> str:
    """The conversation's messages; returns the id of the one holding the secret."""
    ids = []
    with override_settings(**QUIET):
        for body in MESSAGES:
            response = api.post(f"/v1/conversations/{cid}/messages", body, format="json")
            assert response.status_code == 201, response.content
            ids.append(response.json()["data"]["id"])
    return ids[1]


def _assert_nothing_of_the_secret(workspace, cid: str) -> None:
    scope_id = branch_scope_id(cid, "main")
    assert tables_holding(SECRET) == set()
    assert SECRET not in export_text(workspace)
    state = ScopeState.objects.get(workspace=workspace, scope_id=scope_id)
    assert state.last_processed_floor_no >= 3 and state.erasure_generation >= 1
    # The floors that stay were extracted (read again after the erasure).
    loops = list(MemoryItem.objects.filter(workspace=workspace, type="open_loop", status="active")
                 .values_list("content", flat=True))
    assert any("fern" in loop for loop in loops) and any("plumber" in loop for loop in loops), loops


@pytest.mark.django_db(transaction=True)
def test_an_extraction_reads_again_the_floors_erased_while_its_model_ran(api, workspace, monkeypatch, settings):
    """The message is deleted while the model works on a batch that holds it:
    the answer, which quotes it, is dropped and the batch read again."""
    settings.LLM_PROVIDER = "openai"
    model = ScriptedModel()
    monkeypatch.setattr("memories.services.pipeline.extract.get_provider", model.provider)
    cid = "race-inprocess"
    secret_id = _append(api, cid)

    def erase_during_the_first_call():
        if len(model.requests) == 1:
            assert SECRET in model.requests[0]["messages"][-1]["content"]
            response = api.delete(f"/v1/conversations/{cid}/messages/{secret_id}")
            assert response.status_code in (200, 204), response.content

    model.on_request = erase_during_the_first_call
    with eager_celery(), override_settings(**QUIET):
        memory_job_enqueue(workspace=workspace, kind=JobKind.EXTRACT, scope="branch",
                           scope_id=branch_scope_id(cid, "main"))
    job = MemoryJob.objects.get(workspace=workspace, kind=JobKind.EXTRACT)
    assert job.status == "succeeded", job.error
    _assert_nothing_of_the_secret(workspace, cid)
    # The second call saw the floors without the erased one.
    assert len(model.requests) >= 2
    assert SECRET not in model.requests[-1]["messages"][-1]["content"]


class _HeldModel:
    """An OpenAI-compatible endpoint on a local port, answered by the scripted
    model; the first extraction call is held until `release` is set."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.prompts: list[str] = []
        held = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                system = next(m["content"] for m in body["messages"] if m["role"] == "system")
                user = next(m["content"] for m in body["messages"] if m["role"] == "user")
                held.prompts.append(user)
                if len(held.prompts) == 1:
                    held.arrived.set()
                    held.release.wait(60)
                text = _llm_double().answer(system, user)
                reply = json.dumps({
                    "id": f"chatcmpl-{len(held.prompts)}", "object": "chat.completion", "created": 1,
                    "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10},
                }).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> _HeldModel:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.celery_worker
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_worker_extraction_does_not_write_back_a_floor_erased_while_it_ran(api, workspace):
    """A real worker reads the floors and calls the model; the message is
    deleted (and its lineage erased) while the call is held; released, the
    worker's write finds the scope's generation moved, reads the floors
    again, and nothing of the secret is written anywhere."""
    from memory_project.celery import app

    app.control.purge()
    cid = "race-worker"
    secret_id = _append(api, cid)
    with _HeldModel() as model:
        env = {**os.environ, "DATABASE_URL": worker_database_url(), "LLM_PROVIDER": "openai",
               "LLM_BASE_URL": model.base_url, "LLM_API_KEY": "k", "LLM_MODEL": "scripted",
               "LLM_MAX_RETRIES": "0", **{name: str(value) for name, value in QUIET.items()}}
        worker = start_worker(env)
        try:
            memory_job_enqueue(workspace=workspace, kind=JobKind.EXTRACT, scope="branch",
                               scope_id=branch_scope_id(cid, "main"))
            assert model.arrived.wait(60), "the worker never called the model"
            assert SECRET in model.prompts[0]
            response = api.delete(f"/v1/conversations/{cid}/messages/{secret_id}")
            assert response.status_code in (200, 204), response.content
            model.release.set()
            job = MemoryJob.objects.get(workspace=workspace, kind=JobKind.EXTRACT)
            assert wait_for(lambda: MemoryJob.objects.get(pk=job.pk).status in ("succeeded", "failed"), 60)
        finally:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    _assert_nothing_of_the_secret(workspace, cid)
    assert len(model.prompts) >= 2 and SECRET not in model.prompts[-1]
