"""POST /v1/conversations/{cid}/messages with {"messages": [...]}: up to 100
messages in order, all or none, one INSERT and one commit."""

from __future__ import annotations

import pytest

from conversations.models import Conversation, Message
from tests.conversations.helpers import append_ok, assert_error, conv_url, messages
from tests.conversations.helpers_bulk import bulk_fill

pytestmark = pytest.mark.django_db


def _batch(api, cid: str, items: list[dict], **extra):
    headers = {}
    if "idempotency_key" in extra:
        headers["HTTP_IDEMPOTENCY_KEY"] = extra.pop("idempotency_key")
    return api.post(conv_url(cid, "/messages"), {"messages": items, **extra}, format="json", **headers)


def _items(n: int) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(n)]


def test_batch_appends_in_order_and_answers_the_list(api, workspace):
    append_ok(api, "c1", "before")
    response = _batch(api, "c1", [*_items(2), {"role": "tool", "content": {"result": 1}, "metadata": {"k": "v"}}],
                      user_id="u1")
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert [m["floor_no"] for m in data] == [2, 3, 4]
    assert [m["content"] for m in data] == ["turn 0", "turn 1", {"result": 1}]
    assert data[2]["metadata"] == {"k": "v"} and data[2]["role"] == "tool"
    assert {m["conversation_id"] for m in data} == {"c1"} and {m["branch"] for m in data} == {"main"}
    assert [m["id"] for m in messages(api, "c1").json()["data"][1:]] == [m["id"] for m in data]
    conversation = Conversation.objects.get(external_id="c1")
    assert conversation.message_count == 4 and conversation.user_id == "u1"


def test_batch_creates_the_conversation(api):
    response = _batch(api, "fresh", _items(100))
    assert response.status_code == 201
    assert [m["floor_no"] for m in response.json()["data"]] == list(range(1, 101))


@pytest.mark.parametrize(
    "body",
    [
        {"messages": []},
        {"messages": _items(101)},
        {"messages": "nope"},
        {"messages": [{"role": "user", "content": "ok"}, {"role": "bot", "content": "x"}]},
        {"messages": [{"role": "user", "content": "ok"}, {"role": "user", "content": None}]},
        {"messages": [{"role": "user", "content": "ok"}, {"role": "user", "content": "x", "metadata": "m"}]},
        {"messages": [{"role": "user", "content": "x", "idempotency_key": ""}]},
        {"messages": _items(1), "role": "user", "content": "both"},
        {"messages": _items(1), "metadata": {"source": "web"}},
        {"messages": _items(1), "branch": ""},
    ],
)
def test_a_bad_batch_writes_nothing(api, body):
    response = api.post(conv_url("c1", "/messages"), body, format="json")
    assert_error(response, 400, "invalid_request_error")
    assert not Message.objects.exists() and not Conversation.objects.exists()


def test_the_error_names_the_message(api):
    response = _batch(api, "c1", [{"role": "user", "content": "ok"}, {"role": "user", "content": 5}])
    assert "messages[1]" in assert_error(response, 400, "invalid_request_error")["message"]


@pytest.mark.parametrize(
    ("bad", "named"),
    [
        ({"role": "bot", "content": "x"}, "messages[5].role: "),
        ({"content": "x"}, "messages[5].role: "),
        ({"role": "user", "content": None}, "messages[5].content: "),
        ({"role": "user", "content": "x", "metadata": "m"}, "messages[5].metadata: "),
    ],
)
def test_a_field_of_a_message_is_named_as_the_other_errors_name_it(api, bad, named):
    # Whether the serializer or the service refuses it, a message is `messages[i]`.
    response = _batch(api, "c1", [*_items(5), bad])
    assert assert_error(response, 400, "invalid_request_error")["message"].startswith(named)


def test_a_batch_that_would_pass_the_cap_is_refused_whole(api, workspace):
    bulk_fill(workspace, "big", 9_990)
    response = _batch(api, "big", _items(11))
    assert_error(response, 429, "quota_exceeded_error")
    assert Conversation.objects.get(external_id="big").message_count == 9_990
    assert _batch(api, "big", _items(10)).status_code == 201


def test_unknown_branch_is_404(api):
    append_ok(api, "c1")
    assert_error(_batch(api, "c1", _items(2), branch="nope"), 404, "not_found_error")
    assert Message.objects.count() == 1


def test_retry_with_the_same_key_replays(api):
    first = _batch(api, "c1", _items(3), idempotency_key="req-7")
    again = _batch(api, "c1", _items(3), idempotency_key="req-7")
    assert first.status_code == again.status_code == 201
    assert again["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first
    assert [m["id"] for m in again.json()["data"]] == [m["id"] for m in first.json()["data"]]
    assert Message.objects.count() == 3
    assert set(Message.objects.values_list("idempotency_key", flat=True)) == {"req-7:0", "req-7:1", "req-7:2"}
    # The same key for other messages is a conflict.
    other = [{"role": "user", "content": "something else"}] * 2
    assert_error(_batch(api, "c1", other, idempotency_key="req-7"), 409, "conflict_error")


def test_per_message_keys(api):
    items = [{"role": "user", "content": "a", "idempotency_key": "m-a"}, {"role": "user", "content": "b", "idempotency_key": "m-b"}]
    assert _batch(api, "c1", items).status_code == 201
    replay = _batch(api, "c1", items)
    assert replay["Idempotent-Replayed"] == "true"
    assert_error(_batch(api, "c1", [items[0], {"role": "user", "content": "c", "idempotency_key": "m-c"}]), 409,
                 "conflict_error")
    assert Message.objects.count() == 2


def test_read_only_keys_cannot_append(readonly_api):
    assert_error(_batch(readonly_api, "c1", _items(1)), 403, "permission_error")


def test_the_schema_documents_both_bodies(api):
    schema = api.get("/v1/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/v1/conversations/{conversation_id}/messages"]["post"]
    request = operation["requestBody"]["content"]["application/json"]["schema"]
    assert request == {"$ref": "#/components/schemas/MessageAppendRequest"}
    one_of = schema["components"]["schemas"]["MessageAppendRequest"]["oneOf"]
    refs = {item["$ref"].rsplit("/", 1)[1] for item in one_of}
    assert refs == {"MessageAppendInputRequest", "MessageBatchAppendInputRequest"}
    batch = schema["components"]["schemas"]["MessageBatchAppendInputRequest"]
    assert batch["properties"]["messages"]["maxItems"] == 100 and batch["required"] == ["messages"]
    answer = operation["responses"]["201"]["content"]["application/json"]["schema"]
    assert answer == {"$ref": "#/components/schemas/MessageAppendAnswer"}
