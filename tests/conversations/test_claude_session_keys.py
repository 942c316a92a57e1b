"""Claude session keys each own one conversation of their own: keys that
differ only in where a ':' falls never share one, a conversation made through
the API is never adopted (so deleting the session cannot take its messages),
and concurrent first appends of one key neither fail nor deadlock."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections

from accounts.models import Workspace
from conversations.models import Conversation, Message
from framework_state.models import AgentSession, SessionEntry
from framework_state.services.claude import SessionKey, conversation_id_for, session_entries_append
from tests.conversations.helpers import claude_append

pytestmark = pytest.mark.django_db


def _entry(uuid: str, text: str = "hi") -> dict:
    return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": text}}


def _load(api, project_key: str, session_id: str):
    return api.get("/v1/claude_sessions/entries", {"project_key": project_key, "session_id": session_id}).json()["data"]


def test_keys_that_differ_where_the_colon_falls_do_not_collide(api):
    assert conversation_id_for("a:b", "c") != conversation_id_for("a", "b:c")
    for project_key, session_id, uuid in (("a:b", "c", "u1"), ("a", "b:c", "u2"), ("a", "b:c", "u3")):
        assert claude_append(api, project_key=project_key, session_id=session_id, entries=[_entry(uuid, uuid)]).status_code == 200
    assert [e["uuid"] for e in _load(api, "a:b", "c")] == ["u1"]
    assert [e["uuid"] for e in _load(api, "a", "b:c")] == ["u2", "u3"]
    sessions = AgentSession.objects.order_by("pk")
    assert sessions.count() == 2 and len({s.conversation_id for s in sessions}) == 2
    for session in sessions:
        assert Message.objects.filter(conversation=session.conversation).count() == session.entries.count()


def test_ids_with_escapes_and_slashes_stay_distinct_and_valid():
    ids = {conversation_id_for(p, s) for p, s in [("a%3Ab", "c"), ("a:b", "c"), ("x/y", "z"), ("x%2Fy", "z")]}
    assert len(ids) == 4 and not any("/" in i for i in ids)
    long = conversation_id_for("p" * 300, "s")
    assert long.count(":") == 1 and len(long.encode()) <= 256


def test_a_conversation_made_through_the_api_is_never_adopted(api):
    taken = conversation_id_for("proj", "sess")
    plain = api.post(f"/v1/conversations/{taken}/messages", {"role": "user", "content": "mine"}, format="json")
    assert plain.status_code == 201
    assert claude_append(api, project_key="proj", session_id="sess", entries=[_entry("u1")]).status_code == 200
    session = AgentSession.objects.get()
    assert session.conversation.external_id != taken
    # Deleting the session leaves the plain conversation and its message alone.
    response = api.post("/v1/claude_sessions/delete", {"project_key": "proj", "session_id": "sess"}, format="json")
    assert response.status_code == 204, response.content
    assert api.get(f"/v1/conversations/{taken}/messages").json()["data"][0]["content"] == "mine"
    assert not AgentSession.objects.exists() and not SessionEntry.objects.exists()


def test_both_ids_taken_is_a_409_that_writes_nothing(api, workspace):
    from framework_state.services.claude import digest_conversation_id

    for taken in (conversation_id_for("p", "s"), digest_conversation_id("p", "s")):
        Conversation.objects.create(workspace=workspace, external_id=taken)
    response = claude_append(api, project_key="p", session_id="s", entries=[_entry("u1")])
    assert response.status_code == 409 and response.json()["error"]["type"] == "conflict_error"
    assert not AgentSession.objects.exists() and not Message.objects.exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_first_appends_of_one_session_all_succeed(workspace):
    workers = 8
    start = threading.Barrier(workers)
    key = SessionKey("proj", "fresh-session")

    def appender(worker: int) -> str:
        try:
            start.wait()
            ws = Workspace.objects.get(pk=workspace.pk)
            session_entries_append(workspace=ws, key=key, entries=[_entry(f"u{worker}", f"w{worker}")])
            return "ok"
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            return f"{exc.__class__.__name__}: {exc}"
        finally:
            connections.close_all()

    with ThreadPoolExecutor(workers) as pool:
        outcomes = list(pool.map(appender, range(workers)))
    assert outcomes == ["ok"] * workers
    session = AgentSession.objects.get()
    assert session.entries.count() == workers
    assert Message.objects.filter(conversation=session.conversation).count() == workers
