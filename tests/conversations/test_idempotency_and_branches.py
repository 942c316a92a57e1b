"""Idempotent appends and forked branches."""

from __future__ import annotations

import pytest

from conversations.models import Branch, Conversation, Message
from conversations.selectors.branches import branch_view
from conversations.selectors.messages import branch_messages
from tests.conversations.helpers import append, append_ok, assert_error, conv_url, messages

pytestmark = pytest.mark.django_db


def test_retried_append_returns_first_result_and_writes_once(api):
    first = append(api, "c1", "hello", idempotency_key="k-1")
    assert first.status_code == 201
    retry = append(api, "c1", "hello", idempotency_key="k-1")
    assert retry.status_code == 201  # the first answer's status
    assert retry["Idempotent-Replayed"] == "true"
    assert retry.json() == first.json()
    assert Message.objects.count() == 1
    assert Conversation.objects.get().message_count == 1
    # Another key is another message.
    assert append(api, "c1", "hello", idempotency_key="k-2").status_code == 201
    assert Message.objects.count() == 2


def test_same_key_with_a_different_message_is_409(api):
    append_ok(api, "c1", "hello", idempotency_key="k-1")
    assert_error(append(api, "c1", "different", idempotency_key="k-1"), 409, "conflict_error")
    assert_error(append(api, "c2", "hello", idempotency_key="k-1"), 409, "conflict_error")
    assert_error(append(api, "c1", "hello", role="assistant", idempotency_key="k-1"), 409, "conflict_error")
    assert Message.objects.count() == 1
    # The refused request to c2 created nothing either.
    assert not Conversation.objects.filter(external_id="c2").exists()


def test_idempotency_keys_are_per_workspace(api, other_api):
    append_ok(api, "c1", "hello", idempotency_key="k-1")
    assert append(other_api, "c1", "hello", idempotency_key="k-1").status_code == 201
    assert Message.objects.count() == 2


def test_retry_after_an_edit_still_replays(api):
    first = append_ok(api, "c1", "hello", idempotency_key="k-1")
    api.patch(conv_url("c1", f"/messages/{first['id']}"), {"content": "edited"}, format="json")
    retry = append(api, "c1", "hello", idempotency_key="k-1")
    assert retry.status_code == 201  # the first answer's status and retry.json()["data"]["id"] == first["id"]
    assert Message.objects.count() == 1


def test_idempotency_key_too_long(api):
    assert_error(append(api, "c1", "x", idempotency_key="k" * 256), 400, "invalid_request_error")


def _fork(api, cid, name, from_id):
    return api.post(conv_url(cid, "/branches"), {"name": name, "from_message_id": from_id}, format="json")


def test_fork_reads_parent_up_to_fork_then_its_own(api):
    main = [append_ok(api, "c1", f"m{i}") for i in range(1, 6)]
    response = _fork(api, "c1", "alt", main[2]["id"])
    assert response.status_code == 201
    branch = response.json()["data"]
    assert branch["name"] == "alt" and branch["parent"] == "main"
    assert branch["fork_message_id"] == main[2]["id"] and branch["fork_floor_no"] == 3
    own = append_ok(api, "c1", "alt-1", branch="alt")
    assert own["branch"] == "alt" and own["floor_no"] == 4
    data = messages(api, "c1", branch="alt").json()["data"]
    assert [(m["content"], m["branch"], m["floor_no"]) for m in data] == [
        ("m1", "main", 1), ("m2", "main", 2), ("m3", "main", 3), ("alt-1", "alt", 4)
    ]
    # main is untouched
    assert [m["content"] for m in messages(api, "c1").json()["data"]] == [f"m{i}" for i in range(1, 6)]
    assert Conversation.objects.get().message_count == 6


def test_nested_forks_and_paging_across_segments(api):
    main = [append_ok(api, "c1", f"m{i}") for i in range(1, 7)]
    _fork(api, "c1", "a", main[3]["id"])  # sees m1..m4
    a = [append_ok(api, "c1", f"a{i}", branch="a") for i in range(1, 4)]  # floors 5..7
    # Fork b from a's own message a1 (floor 5): sees m1..m4, a1
    assert _fork(api, "c1", "b", a[0]["id"]).status_code == 201
    b = [append_ok(api, "c1", f"b{i}", branch="b") for i in range(1, 3)]  # floors 6..7
    # Fork c from an inherited message of b (m2, owned by main): sees m1..m2
    assert _fork(api, "c1", "c", main[1]["id"]).json()["data"]["parent"] == "main"
    expected_b = ["m1", "m2", "m3", "m4", "a1", "b1", "b2"]
    assert [m["content"] for m in messages(api, "c1", branch="b").json()["data"]] == expected_b
    seen, cursor = [], None
    while True:
        page = messages(api, "c1", branch="b", limit=2, **({"after": cursor} if cursor else {})).json()
        seen += [m["content"] for m in page["data"]]
        cursor = page["meta"]["next_cursor"]
        if not cursor:
            break
    assert seen == expected_b
    desc = messages(api, "c1", branch="b", order="desc", limit=3, after=b[0]["id"]).json()["data"]
    assert [m["content"] for m in desc] == ["a1", "m4", "m3"]
    assert [m["content"] for m in messages(api, "c1", branch="c").json()["data"]] == ["m1", "m2"]
    # A message the branch does not show is not a cursor for it.
    assert_error(messages(api, "c1", branch="b", after=a[1]["id"]), 400, "invalid_request_error")
    # Deleting a parent message hides it in every branch that shows it.
    api.delete(conv_url("c1", f"/messages/{main[0]['id']}"))
    assert [m["content"] for m in messages(api, "c1", branch="b").json()["data"]] == expected_b[1:]


def test_branch_messages_selector_bounds(api, workspace):
    main = [append_ok(api, "c1", f"m{i}") for i in range(1, 6)]
    _fork(api, "c1", "alt", main[1]["id"])
    for i in range(3):
        append_ok(api, "c1", f"x{i}", branch="alt")
    branch = Branch.objects.get(name="alt")
    view = branch_view(branch=branch)
    assert [m.content for m in branch_messages(branch=view)] == ["m1", "m2", "x0", "x1", "x2"]
    assert [m.content for m in branch_messages(branch=branch, after_floor_no=1, until_floor_no=3)] == ["m2", "x0"]
    assert [m.content for m in branch_messages(branch=branch, order="desc", limit=2)] == ["x2", "x1"]
    assert [m.content for m in branch_messages(branch=branch, before_floor_no=3, order="desc")] == ["m2", "m1"]


def test_branch_errors(api):
    msg = append_ok(api, "c1")
    other = append_ok(api, "c2")
    assert_error(_fork(api, "c1", "main", msg["id"]), 409, "conflict_error")
    assert _fork(api, "c1", "alt", msg["id"]).status_code == 201
    assert_error(_fork(api, "c1", "alt", msg["id"]), 409, "conflict_error")
    assert_error(_fork(api, "c1", "x", other["id"]), 404, "not_found_error")
    assert_error(_fork(api, "c1", "x", "msg_nope"), 404, "not_found_error")
    assert_error(_fork(api, "nope", "x", msg["id"]), 404, "not_found_error")
    assert_error(api.post(conv_url("c1", "/branches"), {"name": "x"}, format="json"), 400, "invalid_request_error")
    assert_error(_fork(api, "c1", "", msg["id"]), 400, "invalid_request_error")
    assert_error(_fork(api, "c1", "bad\x01name", msg["id"]), 400, "invalid_request_error")
    # Unknown branch: appending is a 404 (nothing created), reading an existing conversation too.
    assert_error(append(api, "c1", "x", branch="ghost"), 404, "not_found_error")
    assert_error(append(api, "c3", "x", branch="ghost"), 404, "not_found_error")
    assert not Conversation.objects.filter(external_id="c3").exists()
    assert_error(messages(api, "c1", branch="ghost"), 404, "not_found_error")
    assert messages(api, "c3", branch="ghost").json()["data"] == []
    assert Branch.objects.filter(conversation__external_id="c1").count() == 2


def test_context_history_of_a_nested_fork_crosses_its_segments(api):
    main = [append_ok(api, "c1", f"m{i}") for i in range(1, 7)]
    _fork(api, "c1", "a", main[3]["id"])  # sees m1..m4
    a = [append_ok(api, "c1", f"a{i}", branch="a") for i in range(1, 4)]
    _fork(api, "c1", "b", a[0]["id"])  # sees m1..m4, a1
    [append_ok(api, "c1", f"b{i}", branch="b") for i in range(1, 3)]

    def history(branch, n):
        body = {"branch": branch, "max_messages": n, "include_memories": False}
        response = api.post(conv_url("c1", "/context"), body, format="json")
        assert response.status_code == 200, response.content
        return [m["content"] for m in response.json()["data"]["messages"]]

    # The last n the branch shows, oldest first: its own, then its parents' up to each fork.
    assert history("b", 4) == ["m4", "a1", "b1", "b2"]
    assert history("b", 50) == ["m1", "m2", "m3", "m4", "a1", "b1", "b2"]
    assert history("a", 5) == ["m3", "m4", "a1", "a2", "a3"]
    assert history("main", 2) == ["m5", "m6"]
