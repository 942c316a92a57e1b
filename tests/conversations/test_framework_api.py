"""The framework endpoints' own contract: bad input is a 400 that changes
nothing, workspaces are isolated, read-only keys cannot write, lists are not N+1."""

from __future__ import annotations

import base64

import pytest

from conversations.models import Conversation, Message
from framework_state.models import AgentSession, Checkpoint, CheckpointWrite, SessionEntry
from memories.models import MemoryItem
from tests.conversations.helpers import claude_append

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "body",
    [
        {"project_key": "p", "session_id": "s", "entries": [{"no_type": 1}]},
        {"project_key": "p", "session_id": "s", "entries": "nope"},
        {"project_key": "", "session_id": "s", "entries": [{"type": "x"}]},
        {"project_key": "p", "session_id": "s", "subpath": "", "entries": [{"type": "x"}]},
        {"project_key": "p", "session_id": "s", "entries": [{"type": "x"}], "summary": {"data": {}, "expected_version": "1"}},
        {"project_key": "p" * 2000, "session_id": "s", "entries": [{"type": "x"}]},
    ],
)
def test_claude_append_refuses_bad_input_and_writes_nothing(api, body):
    response = claude_append(api, **body)
    assert response.status_code == 400, response.content
    assert response.json()["type"] == "error"
    assert not SessionEntry.objects.exists() and not AgentSession.objects.exists()


def test_claude_summary_version_is_a_precondition(api):
    entry = {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}
    ok = claude_append(api, project_key="p", session_id="s", entries=[entry], summary={"data": {"a": 1}, "expected_version": 0})
    assert ok.status_code == 200 and ok.json()["data"]["summary_version"] == 1
    stale = claude_append(api, project_key="p", session_id="s", entries=[{"type": "x", "uuid": "u2"}],
                    summary={"data": {"a": 2}, "expected_version": 0})
    assert stale.status_code == 409 and stale.json()["error"]["type"] == "memory_precondition_failed"
    assert SessionEntry.objects.count() == 1 and Message.objects.count() == 1


def test_entries_round_trip_verbatim_and_nul_is_refused(api):
    entry = {"type": "assistant", "message": {"role": "assistant", "content": "😀 \\u0000 literal"}, "n": [1.5, None, True]}
    assert claude_append(api, project_key="p", session_id="s", entries=[entry]).status_code == 200
    loaded = api.get("/v1/claude_sessions/entries", {"project_key": "p", "session_id": "s"}).json()["data"]
    assert loaded == [entry]
    refused = claude_append(api, project_key="p", session_id="s", entries=[{"type": "x", "t": "a\x00b"}])
    assert refused.status_code == 400 and SessionEntry.objects.count() == 1


def test_workspaces_are_isolated(api, other_api):
    claude_append(api, project_key="p", session_id="s", entries=[{"type": "x"}])
    assert other_api.get("/v1/claude_sessions", {"project_key": "p"}).json()["data"] == []
    assert other_api.get("/v1/claude_sessions/entries", {"project_key": "p", "session_id": "s"}).json()["data"] is None
    api.post("/v1/openai_sessions/s1/items", {"items": [{"role": "user", "content": "x"}]}, format="json")
    assert other_api.get("/v1/openai_sessions/s1/items").json()["data"] == []
    assert other_api.post("/v1/openai_sessions/s1/items/pop").json()["data"] is None
    assert Message.objects.filter(conversation__external_id="s1").count() == 1


def test_read_only_keys_cannot_write(readonly_api):
    assert claude_append(readonly_api, project_key="p", session_id="s", entries=[{"type": "x"}]).status_code == 403
    put = {"op": "put", "namespace": ["a"], "key": "k", "value": {"v": 1}}
    assert readonly_api.post("/v1/langgraph_store/batch", {"ops": [put]}, format="json").status_code == 403
    get = {"op": "get", "namespace": ["a"], "key": "k"}
    response = readonly_api.post("/v1/langgraph_store/batch", {"ops": [get]}, format="json")
    assert response.status_code == 200 and response.json()["data"] == [None]


def test_store_batch_validates_every_put_before_writing(api):
    ops = [
        {"op": "put", "namespace": ["a"], "key": "k1", "value": {"v": 1}},
        {"op": "put", "namespace": ["a"], "key": "k2", "value": "not an object"},
    ]
    assert api.post("/v1/langgraph_store/batch", {"ops": ops}, format="json").status_code == 400
    assert not MemoryItem.objects.exists()
    bad_filter = {"op": "search", "namespace_prefix": ["a"], "filter": {"v": {"$regex": "x"}}}
    assert api.post("/v1/langgraph_store/batch", {"ops": [bad_filter]}, format="json").status_code == 400


def test_checkpoint_endpoints_refuse_bad_input(api):
    good = {"thread_id": "t", "checkpoint_id": "1", "type": "msgpack", "checkpoint": base64.b64encode(b"x").decode(),
            "metadata": {}}
    for change in ({"checkpoint": "***"}, {"metadata": []}, {"thread_id": "a/b"}, {"metadata": {"k": "\x00"}}):
        assert api.post("/v1/langgraph_checkpoints", {**good, **change}, format="json").status_code == 400
    assert not Checkpoint.objects.exists() and not Conversation.objects.exists()
    assert api.get("/v1/langgraph_checkpoints", {"filter": "[1]"}).status_code == 400
    assert api.get("/v1/langgraph_checkpoints", {"cursor": "@@"}).status_code == 400
    assert api.post("/v1/langgraph_checkpoints/prune", {"thread_ids": ["t"], "strategy": "all"}, format="json").status_code == 400


def test_checkpoint_list_is_not_n_plus_one(api, django_assert_max_num_queries):
    for i in range(30):
        body = {"thread_id": f"t{i % 3}", "checkpoint_id": f"{i:04d}", "type": "bytes",
                "checkpoint": base64.b64encode(b"x").decode(), "metadata": {"step": i}}
        api.post("/v1/langgraph_checkpoints", body, format="json")
        api.post("/v1/langgraph_checkpoints/writes", {"thread_id": f"t{i % 3}", "checkpoint_id": f"{i:04d}",
                 "task_id": "task", "writes": [{"idx": 0, "channel": "c", "type": "bytes", "value": "eA=="}]}, format="json")
    with django_assert_max_num_queries(8):
        response = api.get("/v1/langgraph_checkpoints", {"limit": 25})
    page = response.json()
    assert [row["checkpoint_id"] for row in page["data"]] == [f"{i:04d}" for i in range(29, 4, -1)]
    assert all(len(row["pending_writes"]) == 1 for row in page["data"])
    rest = api.get("/v1/langgraph_checkpoints", {"limit": 25, "cursor": page["meta"]["next_cursor"]}).json()
    assert [row["checkpoint_id"] for row in rest["data"]] == [f"{i:04d}" for i in range(4, -1, -1)]
    with django_assert_max_num_queries(6):
        api.get("/v1/openai_sessions/t0/items")


def _put_op(thread_id: str, checkpoint_id: str, blob: bytes = b"state", **extra) -> dict:
    return {"op": "put", "thread_id": thread_id, "checkpoint_id": checkpoint_id, "type": "msgpack",
            "checkpoint": base64.b64encode(blob).decode(), "metadata": {"step": 1}, **extra}


def _writes_op(thread_id: str, checkpoint_id: str, task_id: str, *writes: tuple[int, bytes]) -> dict:
    return {"op": "put_writes", "thread_id": thread_id, "checkpoint_id": checkpoint_id, "task_id": task_id,
            "writes": [{"idx": idx, "channel": f"c{idx}", "type": "bytes", "value": base64.b64encode(value).decode()}
                       for idx, value in writes]}


def test_checkpoint_batch_stores_puts_and_writes_as_if_applied_in_order(api):
    ops = [
        _put_op("t-new", "0001"),
        _writes_op("t-new", "0001", "task", (0, b"first"), (-1, b"error-1")),
        _writes_op("t-other", "0009", "task", (0, b"other")),
        _put_op("t-new", "0002", parent_checkpoint_id="0001"),
        _put_op("t-new", "0002", blob=b"newer", parent_checkpoint_id="0001"),  # the later put of an id stands
        _writes_op("t-new", "0001", "task", (0, b"replayed"), (-1, b"error-2")),  # regular kept, special replaced
    ]
    response = api.post("/v1/langgraph_checkpoints/batch", {"ops": ops}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["data"] == [
        {"thread_id": "t-new", "checkpoint_ns": "", "checkpoint_id": "0001"},
        {"written": 2},
        {"written": 1},
        {"thread_id": "t-new", "checkpoint_ns": "", "checkpoint_id": "0002"},
        {"thread_id": "t-new", "checkpoint_ns": "", "checkpoint_id": "0002"},
        {"written": 2},
    ]
    assert set(Conversation.objects.values_list("external_id", flat=True)) == {"t-new", "t-other"}
    stored = {row.checkpoint_id: (bytes(row.checkpoint), row.parent_checkpoint_id) for row in Checkpoint.objects.all()}
    assert stored == {"0001": (b"state", None), "0002": (b"newer", "0001")}
    writes = {(w.conversation.external_id, w.idx): bytes(w.value) for w in CheckpointWrite.objects.select_related("conversation")}
    assert writes == {("t-new", 0): b"first", ("t-new", -1): b"error-2", ("t-other", 0): b"other"}
    tuple_ = api.get("/v1/langgraph_checkpoints/tuple", {"thread_id": "t-new", "checkpoint_ns": "",
                                                         "checkpoint_id": "0001"}).json()["data"]
    assert sorted(w["channel"] for w in tuple_["pending_writes"]) == ["c-1", "c0"]


@pytest.mark.parametrize("bad", [
    {"op": "delete"},
    {**_put_op("t", "0003"), "checkpoint": "***"},
    {**_writes_op("t", "0003", "task", (0, b"x")), "writes": [{"idx": 2**40, "channel": "c", "type": "b", "value": ""}]},
    "not an op",
])
def test_checkpoint_batch_with_one_bad_op_stores_nothing(api, bad):
    ops = [_put_op("t", "0001"), _writes_op("t", "0001", "task", (0, b"v")), bad]
    response = api.post("/v1/langgraph_checkpoints/batch", {"ops": ops}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("ops[2]: ")
    assert not Checkpoint.objects.exists() and not CheckpointWrite.objects.exists() and not Conversation.objects.exists()


def test_checkpoint_batch_bounds_its_size(api):
    too_many = [_put_op("t", f"{i:04d}") for i in range(101)]
    assert api.post("/v1/langgraph_checkpoints/batch", {"ops": too_many}, format="json").status_code == 400
    assert api.post("/v1/langgraph_checkpoints/batch", {"ops": {}}, format="json").status_code == 400
    assert api.post("/v1/langgraph_checkpoints/batch", [], format="json").status_code == 400
    assert not Checkpoint.objects.exists()
    assert api.post("/v1/langgraph_checkpoints/batch", {"ops": []}, format="json").json() == {"data": []}


def test_empty_task_writes_store_nothing_and_make_no_thread(api):
    empty = {"thread_id": "t-empty", "checkpoint_id": "0001", "task_id": "task", "writes": []}
    assert api.post("/v1/langgraph_checkpoints/writes", empty, format="json").json() == {"data": {"written": 0}}
    batch = {"ops": [{**empty, "op": "put_writes"}, {**empty, "op": "put_writes", "thread_id": "t-empty-2"}]}
    assert api.post("/v1/langgraph_checkpoints/batch", batch, format="json").json() == {"data": [{"written": 0}] * 2}
    assert not Conversation.objects.exists() and not CheckpointWrite.objects.exists()


def test_a_batch_over_existing_and_new_threads_stores_all(api):
    api.post("/v1/langgraph_checkpoints/batch", {"ops": [_put_op("t-old", "0001")]}, format="json")
    ops = [_put_op("t-old", "0002", parent_checkpoint_id="0001"), _put_op("t-fresh", "0001"),
           _writes_op("t-fresh", "0001", "task", (0, b"v"))]
    assert api.post("/v1/langgraph_checkpoints/batch", {"ops": ops}, format="json").status_code == 200
    assert sorted(Checkpoint.objects.values_list("conversation__external_id", "checkpoint_id")) == [
        ("t-fresh", "0001"), ("t-old", "0001"), ("t-old", "0002")]
    assert CheckpointWrite.objects.get().conversation.external_id == "t-fresh"


def test_errors_name_the_id_as_the_framework_calls_it(api):
    # A thread id and a session id are conversation ids underneath; the
    # caller named them otherwise.
    put = api.post("/v1/langgraph_checkpoints", {**_put_op("", "0001")}, format="json")
    assert put.status_code == 400 and put.json()["error"]["message"].startswith("thread_id: ")
    batch = api.post("/v1/langgraph_checkpoints/batch", {"ops": [{"op": "put"}]}, format="json")
    assert batch.json()["error"]["message"].startswith("ops[0]: thread_id: ")
    items = api.post(f"/v1/openai_sessions/{'s' * 300}/items", {"items": [{"role": "user", "content": "hi"}]},
                     format="json")
    assert items.status_code == 400 and items.json()["error"]["message"].startswith("session_id: ")
    copy = api.post("/v1/langgraph_checkpoints/copy_thread", {"source_thread_id": "a", "target_thread_id": "x/y"},
                    format="json")
    assert copy.status_code == 400 and copy.json()["error"]["message"].startswith("target_thread_id: ")
    assert not Conversation.objects.exists()


def test_the_schema_bounds_an_items_add_as_the_service_does(api):
    schema = api.get("/v1/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/v1/openai_sessions/{session_id}/items"]["post"]
    ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert schema["components"]["schemas"][ref]["properties"]["items"]["maxItems"] == 1000
    items = [{"role": "user", "content": "x"}]
    assert api.post("/v1/openai_sessions/s/items", {"items": items * 1000}, format="json").status_code == 201
    assert api.post("/v1/openai_sessions/s/items", {"items": items * 1001}, format="json").status_code == 400
