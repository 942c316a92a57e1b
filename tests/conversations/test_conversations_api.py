"""Conversation metadata: create, get, update (shallow merge), delete, list."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from conversations.models import Branch, Conversation, Message
from tests.conversations.helpers import append_ok, assert_error, conv_url

pytestmark = pytest.mark.django_db


def test_create_explicitly(api):
    response = api.post("/v1/conversations", {"conversation_id": "c1", "user_id": "u1", "metadata": {"title": "T"}}, format="json")
    assert response.status_code == 201
    data = response.json()["data"]
    assert data["conversation_id"] == "c1" and data["user_id"] == "u1"
    assert data["metadata"] == {"title": "T"} and data["message_count"] == 0
    assert data["last_message_at"] == data["created_at"]
    assert Branch.objects.filter(conversation__external_id="c1", name="main").exists()
    assert_error(api.post("/v1/conversations", {"conversation_id": "c1"}, format="json"), 409, "conflict_error")


@pytest.mark.parametrize("body", [{}, {"conversation_id": ""}, {"conversation_id": "a/b"}, {"conversation_id": "é" * 129}, {"conversation_id": "c", "metadata": 3}])
def test_create_validation(api, body):
    assert_error(api.post("/v1/conversations", body, format="json"), 400, "invalid_request_error")
    assert not Conversation.objects.exists()


def test_get_conversation(api):
    message = append_ok(api, "c1", "hello", user_id="u9")
    data = api.get(conv_url("c1")).json()["data"]
    assert data["conversation_id"] == "c1"
    assert data["user_id"] == "u9"
    assert data["message_count"] == 1
    assert data["last_message_at"] == message["created_at"]
    assert data["metadata"] == {}
    assert_error(api.get(conv_url("nope")), 404, "not_found_error")


def test_update_conversation_shallow_merge_and_null_deletes(api):
    append_ok(api, "c1")
    api.patch(conv_url("c1"), {"metadata": {"title": "A", "tag": "x", "nested": {"a": 1}}}, format="json")
    response = api.patch(conv_url("c1"), {"metadata": {"title": "产品咨询", "tag": None, "nested": {"b": 2}}}, format="json")
    assert response.status_code == 200
    assert response.json()["data"]["metadata"] == {"title": "产品咨询", "nested": {"b": 2}}
    response = api.patch(conv_url("c1"), {"user_id": "u2"}, format="json")
    assert response.json()["data"]["user_id"] == "u2"
    assert response.json()["data"]["metadata"]["title"] == "产品咨询"
    # Once set, the user is fixed: neither cleared nor changed (409), and the
    # same value again changes nothing.
    assert_error(api.patch(conv_url("c1"), {"user_id": None}, format="json"), 409, "conflict_error")
    assert_error(api.patch(conv_url("c1"), {"user_id": "u3"}, format="json"), 409, "conflict_error")
    assert api.patch(conv_url("c1"), {"user_id": "u2"}, format="json").json()["data"]["user_id"] == "u2"


def test_update_conversation_errors(api):
    append_ok(api, "c1")
    assert_error(api.patch(conv_url("c1"), {}, format="json"), 400, "invalid_request_error")
    assert_error(api.patch(conv_url("c1"), {"metadata": "x"}, format="json"), 400, "invalid_request_error")
    assert_error(api.patch(conv_url("nope"), {"metadata": {"a": 1}}, format="json"), 404, "not_found_error")


def test_delete_conversation_removes_everything(api):
    msg = append_ok(api, "c1")
    api.post(conv_url("c1", "/branches"), {"name": "alt", "from_message_id": msg["id"]}, format="json")
    append_ok(api, "c2")
    assert api.delete(conv_url("c1")).status_code == 204
    assert not Conversation.objects.filter(external_id="c1").exists()
    assert not Message.objects.filter(conversation__external_id="c1").exists()
    assert Branch.objects.filter(conversation__external_id="c1").count() == 0
    assert Message.objects.count() == 1
    assert_error(api.get(conv_url("c1")), 404, "not_found_error")
    assert_error(api.delete(conv_url("c1")), 404, "not_found_error")
    # The id can be reused afterwards, from a clean slate.
    assert append_ok(api, "c1")["floor_no"] == 1


def _stamp(workspace, external_id: str, minutes_ago: int, user_id: str | None = None) -> Conversation:
    now = timezone.now()
    conversation = Conversation.objects.create(workspace=workspace, external_id=external_id, user_id=user_id)
    conversation.last_message_at = now - timedelta(minutes=minutes_ago)
    conversation.save(update_fields=["last_message_at"])
    return conversation


def test_list_orders_by_last_message_at_desc(api, workspace):
    _stamp(workspace, "old", 30)
    _stamp(workspace, "new", 1)
    _stamp(workspace, "mid", 10)
    body = api.get("/v1/conversations").json()
    assert [c["conversation_id"] for c in body["data"]] == ["new", "mid", "old"]
    assert body["meta"] == {"next_cursor": None, "previous_cursor": None}
    body = api.get("/v1/conversations", {"order": "asc"}).json()
    assert [c["conversation_id"] for c in body["data"]] == ["old", "mid", "new"]


def test_appending_moves_a_conversation_to_the_top(api):
    append_ok(api, "a")
    append_ok(api, "b")
    api.post("/v1/conversations", {"conversation_id": "empty"}, format="json")
    append_ok(api, "a")
    ids = [c["conversation_id"] for c in api.get("/v1/conversations").json()["data"]]
    assert ids == ["a", "empty", "b"]


def test_list_paging_both_ways_with_ties(api, workspace, django_assert_max_num_queries):
    same = timezone.now() - timedelta(hours=1)
    for i in range(7):
        conversation = Conversation.objects.create(workspace=workspace, external_id=f"c{i}")
        Conversation.objects.filter(pk=conversation.pk).update(last_message_at=same if i < 4 else same + timedelta(seconds=i))
    expected = [c.external_id for c in Conversation.objects.order_by("-last_message_at", "-pk")]
    seen, cursor, pages = [], None, []
    while True:
        params = {"limit": 3, **({"after": cursor} if cursor else {})}
        with django_assert_max_num_queries(3):
            body = api.get("/v1/conversations", params).json()
        pages.append(body)
        seen += [c["conversation_id"] for c in body["data"]]
        cursor = body["meta"]["next_cursor"]
        if not cursor:
            break
    assert seen == expected and len(pages) == 3
    # previous_cursor of the last page leads back to the page before it.
    back = api.get("/v1/conversations", {"limit": 3, "before": pages[2]["meta"]["previous_cursor"]}).json()
    assert [c["conversation_id"] for c in back["data"]] == expected[3:6]
    back = api.get("/v1/conversations", {"limit": 3, "before": back["meta"]["previous_cursor"]}).json()
    assert [c["conversation_id"] for c in back["data"]] == expected[0:3]
    assert back["meta"]["previous_cursor"] is None


def test_list_by_user(api, workspace, django_assert_max_num_queries):
    for i in range(5):
        _stamp(workspace, f"u1-{i}", i, user_id="u1")
        _stamp(workspace, f"u2-{i}", i, user_id="u2")
    with django_assert_max_num_queries(3):
        body = api.get("/v1/conversations", {"user_id": "u1", "limit": 100}).json()
    assert [c["conversation_id"] for c in body["data"]] == [f"u1-{i}" for i in range(5)]
    page = api.get("/v1/conversations", {"user_id": "u2", "limit": 2}).json()
    page2 = api.get("/v1/conversations", {"user_id": "u2", "limit": 2, "after": page["meta"]["next_cursor"]}).json()
    assert [c["conversation_id"] for c in page["data"] + page2["data"]] == ["u2-0", "u2-1", "u2-2", "u2-3"]


def test_append_user_id_feeds_the_user_index(api):
    append_ok(api, "c1", user_id="alice")
    append_ok(api, "c2")
    ids = [c["conversation_id"] for c in api.get("/v1/conversations", {"user_id": "alice"}).json()["data"]]
    assert ids == ["c1"]


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": 101}, {"limit": "ten"}, {"order": "newest"}, {"after": "garbage"}, {"before": "Zm9v"}, {"after": "a", "before": "b"}],
)
def test_list_parameter_errors(api, params):
    append_ok(api, "c1")
    assert_error(api.get("/v1/conversations", params), 400, "invalid_request_error")


def test_list_query_count_does_not_grow(api, workspace, django_assert_max_num_queries):
    for i in range(40):
        _stamp(workspace, f"c{i}", i, user_id="u")
    with django_assert_max_num_queries(3):
        body = api.get("/v1/conversations", {"limit": 100}).json()
    assert len(body["data"]) == 40


def test_branches_listing(api):
    msg = append_ok(api, "c1")
    api.post(conv_url("c1", "/branches"), {"name": "alt", "from_message_id": msg["id"]}, format="json")
    data = api.get(conv_url("c1", "/branches")).json()["data"]
    assert [(b["name"], b["parent"], b["fork_message_id"]) for b in data] == [("main", None, None), ("alt", "main", msg["id"])]
    assert_error(api.get(conv_url("nope", "/branches")), 404, "not_found_error")
