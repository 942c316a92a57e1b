"""Append, read, update, delete and clear messages (spec 000's generic API)."""

from __future__ import annotations

import pytest

from conversations.models import Conversation, Message
from tests.conversations.helpers import append, append_ok, assert_error, conv_url, messages

pytestmark = pytest.mark.django_db


def test_append_auto_creates_conversation_and_returns_message(api, workspace):
    data = append_ok(api, "c1", "hello", metadata={"source": "web"}, user_id="u1")
    assert data["id"].startswith("msg_") and data["message_id"] == data["id"]
    assert data["conversation_id"] == "c1"
    assert data["branch"] == "main"
    assert data["floor_no"] == 1
    assert data["role"] == "user"
    assert data["content"] == "hello"
    assert data["metadata"] == {"source": "web"}
    assert isinstance(data["created_at"], int) and data["created_at"] > 1_600_000_000_000
    assert data["updated_at"] is None
    conversation = Conversation.objects.get(workspace=workspace, external_id="c1")
    assert conversation.user_id == "u1"
    assert conversation.message_count == 1
    assert int(conversation.last_message_at.timestamp() * 1000) == data["created_at"]


@pytest.mark.parametrize("content", ["text", ["a", "b"], {"type": "image", "url": "https://x"}, [{"type": "text", "text": "t"}], ""])
def test_content_may_be_string_list_or_object(api, content):
    data = append_ok(api, "c1", content)
    assert data["content"] == content
    assert messages(api, "c1").json()["data"][0]["content"] == content


@pytest.mark.parametrize("content", [None, 5, True, 1.5])
def test_content_of_other_types_is_refused(api, content):
    assert_error(append(api, "c1", content), 400, "invalid_request_error")
    assert not Conversation.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"content": "x"},
        {"role": "bot", "content": "x"},
        {"role": "user"},
        {"role": "user", "content": "x", "metadata": "nope"},
        {"role": "user", "content": "x", "metadata": None},
        {"role": "user", "content": "x", "user_id": ""},
        {"role": "user", "content": "x", "user_id": "u" * 257},
        {"role": "user", "content": "x", "branch": ""},
    ],
)
def test_append_validation(api, body):
    response = api.post(conv_url("c1", "/messages"), body, format="json")
    assert_error(response, 400, "invalid_request_error")
    assert not Message.objects.exists() and not Conversation.objects.exists()


def test_append_refuses_non_json_body(api):
    response = api.post(conv_url("c1", "/messages"), "not json", content_type="application/json")
    assert_error(response, 400, "invalid_request_error")


def test_content_over_50mb_is_refused(api, settings):
    from conversations.models import MAX_CONTENT_BYTES

    # Serialized as JSON the string gains its two quotes: just over the limit.
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_CONTENT_BYTES + 1024 * 1024
    error = assert_error(append(api, "c1", "x" * (MAX_CONTENT_BYTES - 1)), 400, "invalid_request_error")
    assert "limit" in error["message"]
    assert not Message.objects.exists()


def test_request_body_over_upload_limit_is_413(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    assert_error(append(api, "c1", "x" * 2000), 413, "invalid_request_error")
    assert not Message.objects.exists()


def test_floors_increase_and_count_is_exact(api, workspace):
    floors = [append_ok(api, "c1", f"m{i}")["floor_no"] for i in range(5)]
    assert floors == [1, 2, 3, 4, 5]
    assert Conversation.objects.get(external_id="c1").message_count == 5


def test_get_messages_default_order_and_limit(api):
    for i in range(25):
        append_ok(api, "c1", f"m{i}")
    body = messages(api, "c1").json()
    assert [m["content"] for m in body["data"]] == [f"m{i}" for i in range(20)]
    assert body["meta"]["next_cursor"] == body["data"][-1]["id"]
    assert body["meta"]["previous_cursor"] is None
    body = messages(api, "c1", order="desc", limit=3).json()
    assert [m["content"] for m in body["data"]] == ["m24", "m23", "m22"]


def test_unknown_conversation_reads_as_empty_list(api):
    body = messages(api, "nobody").json()
    assert body == {"data": [], "meta": {"next_cursor": None, "previous_cursor": None}}


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": 101}, {"limit": "x"}, {"limit": -1}, {"order": "up"}, {"format": "xml"}],
)
def test_get_messages_parameter_errors(api, params):
    append_ok(api, "c1")
    assert_error(messages(api, "c1", **params), 400, "invalid_request_error")


def test_limit_bounds_are_inclusive(api):
    for i in range(3):
        append_ok(api, "c1", f"m{i}")
    assert len(messages(api, "c1", limit=1).json()["data"]) == 1
    assert len(messages(api, "c1", limit=100).json()["data"]) == 3


def test_after_and_before_are_mutually_exclusive(api):
    first = append_ok(api, "c1")
    second = append_ok(api, "c1")
    error = assert_error(messages(api, "c1", after=first["id"], before=second["id"]), 400, "invalid_request_error")
    assert "mutually exclusive" in error["message"]


def test_unknown_cursor_message_is_400(api):
    append_ok(api, "c1")
    other = append_ok(api, "c2")
    error = assert_error(messages(api, "c1", after="msg_nope"), 400, "invalid_request_error")
    assert "msg_nope" in error["message"]
    # A message of another conversation is not a cursor of this one.
    assert_error(messages(api, "c1", before=other["id"]), 400, "invalid_request_error")


def test_cursor_paging_forward_and_back(api):
    ids = [append_ok(api, "c1", f"m{i}")["id"] for i in range(7)]
    seen, cursor = [], None
    while True:
        params = {"limit": 3, **({"after": cursor} if cursor else {})}
        body = messages(api, "c1", **params).json()
        seen += [m["id"] for m in body["data"]]
        cursor = body["meta"]["next_cursor"]
        if cursor is None:
            break
    assert seen == ids
    # Back from the end with before=...
    page = messages(api, "c1", before=ids[5], limit=3).json()
    assert [m["id"] for m in page["data"]] == ids[2:5]
    assert page["meta"]["previous_cursor"] == ids[2]
    assert page["meta"]["next_cursor"] == ids[4]
    page = messages(api, "c1", before=ids[2], limit=3).json()
    assert [m["id"] for m in page["data"]] == ids[0:2]
    assert page["meta"]["previous_cursor"] is None


def test_cursor_paging_desc(api):
    ids = [append_ok(api, "c1", f"m{i}")["id"] for i in range(5)]
    page = messages(api, "c1", order="desc", limit=2).json()
    assert [m["id"] for m in page["data"]] == [ids[4], ids[3]]
    page = messages(api, "c1", order="desc", limit=2, after=page["meta"]["next_cursor"]).json()
    assert [m["id"] for m in page["data"]] == [ids[2], ids[1]]
    page = messages(api, "c1", order="desc", limit=2, before=ids[2]).json()
    assert [m["id"] for m in page["data"]] == [ids[4], ids[3]]


def test_paging_never_skips_or_repeats_while_appending(api):
    """Interleave reads and appends: every message is seen once, in order."""
    expected = [append_ok(api, "c1", "seed0")["id"], append_ok(api, "c1", "seed1")["id"]]
    seen, cursor = [], None
    for round_no in range(12):
        params = {"limit": 2, **({"after": cursor} if cursor else {})}
        page = messages(api, "c1", **params).json()
        seen += [m["id"] for m in page["data"]]
        if page["data"]:
            cursor = page["data"][-1]["id"]
        if round_no < 8:
            expected += [append_ok(api, "c1", f"new{round_no}-{k}")["id"] for k in range(round_no % 3)]
    assert seen == expected


def test_cursors_stay_valid_after_deletes(api):
    ids = [append_ok(api, "c1", f"m{i}")["id"] for i in range(6)]
    api.delete(conv_url("c1", f"/messages/{ids[3]}"))
    page = messages(api, "c1", after=ids[1], limit=10).json()
    assert [m["id"] for m in page["data"]] == [ids[2], ids[4], ids[5]]
    # New messages never reuse a floor number.
    new = append_ok(api, "c1", "after delete")
    assert new["floor_no"] == 7


def test_page_query_count_is_fixed(api, django_assert_max_num_queries):
    for i in range(30):
        append_ok(api, "c1", f"m{i}")
    first = messages(api, "c1", limit=5).json()["data"]
    # auth + conversation + branch + (cursor) + page
    with django_assert_max_num_queries(6):
        page = messages(api, "c1", limit=100, after=first[-1]["id"]).json()
    assert len(page["data"]) == 25


def test_update_message_only_given_fields(api):
    msg = append_ok(api, "c1", "v1", metadata={"a": 1, "b": 2})
    response = api.patch(conv_url("c1", f"/messages/{msg['id']}"), {"content": "v2"}, format="json")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["content"] == "v2" and data["metadata"] == {"a": 1, "b": 2}
    assert data["updated_at"] >= data["created_at"]
    assert data["floor_no"] == 1 and data["conversation_id"] == "c1" and data["branch"] == "main"
    # metadata is replaced whole, not merged
    data = api.patch(conv_url("c1", f"/messages/{msg['id']}"), {"metadata": {"edited": True}}, format="json").json()["data"]
    assert data["content"] == "v2" and data["metadata"] == {"edited": True}
    stored = messages(api, "c1").json()["data"][0]
    assert stored["content"] == "v2" and stored["metadata"] == {"edited": True} and stored["updated_at"]


def test_update_message_errors(api):
    msg = append_ok(api, "c1", "v1")
    url = conv_url("c1", f"/messages/{msg['id']}")
    assert_error(api.patch(url, {}, format="json"), 400, "invalid_request_error")
    assert_error(api.patch(url, {"content": None}, format="json"), 400, "invalid_request_error")
    assert_error(api.patch(url, {"metadata": [1]}, format="json"), 400, "invalid_request_error")
    assert_error(api.patch(conv_url("c1", "/messages/msg_nope"), {"content": "x"}, format="json"), 404, "not_found_error")
    assert_error(api.patch(conv_url("c2", f"/messages/{msg['id']}"), {"content": "x"}, format="json"), 404, "not_found_error")
    assert Message.objects.get().content == "v1"


def test_delete_message(api, workspace):
    first = append_ok(api, "c1", "a")
    second = append_ok(api, "c1", "b")
    assert api.delete(conv_url("c1", f"/messages/{second['id']}")).status_code == 204
    conversation = Conversation.objects.get(external_id="c1")
    assert conversation.message_count == 1
    # last_message_at follows the newest remaining message
    assert int(conversation.last_message_at.timestamp() * 1000) == first["created_at"]
    assert [m["id"] for m in messages(api, "c1").json()["data"]] == [first["id"]]
    assert_error(api.delete(conv_url("c1", f"/messages/{second['id']}")), 404, "not_found_error")
    assert_error(api.delete(conv_url("zz", f"/messages/{first['id']}")), 404, "not_found_error")


def test_clear_keeps_metadata(api):
    append_ok(api, "c1", "a", user_id="u1")
    append_ok(api, "c1", "b")
    api.patch(conv_url("c1"), {"metadata": {"title": "T"}}, format="json")
    response = api.delete(conv_url("c1", "/messages"))
    assert response.status_code == 200
    body = response.json()
    assert body["meta"]["deleted_count"] == 2
    assert body["data"]["message_count"] == 0 and body["data"]["metadata"] == {"title": "T"}
    assert body["data"]["user_id"] == "u1"
    assert messages(api, "c1").json()["data"] == []
    meta = api.get(conv_url("c1")).json()["data"]
    assert meta["message_count"] == 0 and meta["metadata"] == {"title": "T"}
    assert meta["last_message_at"] == meta["created_at"]
    # Floors continue after a clear.
    assert append_ok(api, "c1", "c")["floor_no"] == 3
    assert_error(api.delete(conv_url("unknown", "/messages")), 404, "not_found_error")


def test_quota_of_10000_messages(api, workspace):
    from conversations.models import MAX_MESSAGES_PER_CONVERSATION
    from tests.conversations.helpers_bulk import bulk_fill

    conversation = bulk_fill(workspace, "full", MAX_MESSAGES_PER_CONVERSATION - 1)
    assert append(api, "full", "last one").status_code == 201
    error = assert_error(append(api, "full", "one too many"), 429, "quota_exceeded_error")
    assert "10000" in error["message"]
    conversation.refresh_from_db()
    assert conversation.message_count == MAX_MESSAGES_PER_CONVERSATION
    assert Message.objects.filter(conversation=conversation).count() == MAX_MESSAGES_PER_CONVERSATION
    # Deleting one frees one slot.
    last = Message.objects.filter(conversation=conversation).order_by("-floor_no").first()
    api.delete(conv_url("full", f"/messages/{last.pk}"))
    assert append(api, "full", "fits again").status_code == 201


@pytest.mark.parametrize("content", ["nul \x00 inside", {"k": "nul \x00"}, ["\x00"]])
def test_unstorable_strings_are_400_on_every_database(api, content):
    # PostgreSQL's jsonb cannot hold NUL: refused up front, the same on SQLite.
    assert_error(append(api, "c1", content), 400, "invalid_request_error")
    assert not Message.objects.exists()
