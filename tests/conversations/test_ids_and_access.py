"""Business ids in URLs, workspace isolation, read-only keys and authentication."""

from __future__ import annotations

import pytest

from accounts.models import ApiKey
from conversations.models import Conversation, Message
from tests.conversations.helpers import append, append_ok, assert_error, conv_url, messages

pytestmark = pytest.mark.django_db

ODD_IDS = [
    "support:u1001:c2002",
    "客服 会话#1?x=1",
    "emoji 🎉🧠",
    "a%2Fb-literal-percent",
    "semi;colon,comma=eq&amp+plus",
    "  spaces around  ",
    "back\\slash",
    "x" * 256,
    "é" * 128,
]


@pytest.mark.parametrize("cid", ODD_IDS)
def test_reserved_character_ids_round_trip(api, cid):
    message = append_ok(api, cid, "hello")
    assert message["conversation_id"] == cid
    assert Conversation.objects.get().external_id == cid
    assert api.get(conv_url(cid)).json()["data"]["conversation_id"] == cid
    assert messages(api, cid).json()["data"][0]["id"] == message["id"]
    response = api.patch(conv_url(cid, f"/messages/{message['id']}"), {"content": "edited"}, format="json")
    assert response.status_code == 200 and response.json()["data"]["conversation_id"] == cid
    listed = api.get("/v1/conversations").json()["data"]
    assert [c["conversation_id"] for c in listed] == [cid]
    assert api.delete(conv_url(cid)).status_code == 204


@pytest.mark.parametrize("cid", ["x" * 257, "é" * 129, "tab\there", "nul\x00", "new\nline", "del\x7f", "c1\x85",
                                 "c1\x9f", "unit\x1f", ".", ".."])
def test_bad_ids_are_400(api, cid):
    assert_error(append(api, cid), 400, "invalid_request_error")
    assert not Message.objects.exists()


@pytest.mark.parametrize("cid", ["nbsp\xa0", "tilde~", "space here", "emoji🙂"])
def test_printable_ids_next_to_the_control_ranges_are_taken(api, cid):
    append_ok(api, cid)
    assert Conversation.objects.get().external_id == cid


def test_slash_in_id_is_refused_never_500(api):
    # The test client, like WSGI servers, decodes %2F before routing.
    response = append(api, "a/b")
    assert response.status_code in (400, 404)
    assert response.json()["type"] == "error"
    assert api.get("/v1/conversations/a%2Fb").status_code in (400, 404)
    assert not Message.objects.exists()


def test_encoded_slash_is_400_when_the_server_reports_the_raw_path(api):
    """gunicorn passes the undecoded path as RAW_URI: `x%2Fmessages` must not
    be taken for conversation `x`'s message list."""
    append_ok(api, "x")
    raw = "/v1/conversations/x%2Fmessages"
    response = api.get("/v1/conversations/x/messages", RAW_URI=raw)
    error = assert_error(response, 400, "invalid_request_error")
    assert "'/'" in error["message"]
    response = api.post("/v1/conversations/x/messages", {"role": "user", "content": "c"}, format="json", RAW_URI=raw)
    assert_error(response, 400, "invalid_request_error")
    # An id with a slash lands on no route at all: still a 400 that says why.
    raw = "/v1/conversations/a%2Fb/messages"
    response = api.post("/v1/conversations/a/b/messages", {"role": "user", "content": "c"}, format="json", RAW_URI=raw)
    assert "'/'" in assert_error(response, 400, "invalid_request_error")["message"]
    assert Message.objects.count() == 1


def test_other_workspace_gets_404(api, other_api):
    message = append_ok(api, "shared-name", "secret")
    url = conv_url("shared-name")
    assert_error(other_api.get(url), 404, "not_found_error")
    assert_error(other_api.patch(url, {"metadata": {"a": 1}}, format="json"), 404, "not_found_error")
    assert_error(other_api.delete(url), 404, "not_found_error")
    assert_error(other_api.delete(conv_url("shared-name", "/messages")), 404, "not_found_error")
    assert_error(other_api.patch(conv_url("shared-name", f"/messages/{message['id']}"), {"content": "x"}, format="json"), 404, "not_found_error")
    assert_error(other_api.delete(conv_url("shared-name", f"/messages/{message['id']}")), 404, "not_found_error")
    assert_error(other_api.post(conv_url("shared-name", "/branches"), {"name": "b", "from_message_id": message["id"]}, format="json"), 404, "not_found_error")
    assert_error(other_api.get(conv_url("shared-name", "/branches")), 404, "not_found_error")
    # Reading messages of a conversation one cannot see reads as empty.
    assert other_api.get(conv_url("shared-name", "/messages")).json()["data"] == []
    assert other_api.get("/v1/conversations").json()["data"] == []
    # Appending with the same business id creates the other workspace's own conversation.
    assert append_ok(other_api, "shared-name", "mine")["floor_no"] == 1
    assert api.get(conv_url("shared-name", "/messages")).json()["data"][0]["content"] == "secret"
    assert Message.objects.get(pk=message["id"]).content == "secret"


def test_read_only_key_may_read_but_never_write(api, readonly_api):
    message = append_ok(api, "c1", "hello")
    assert readonly_api.get(conv_url("c1", "/messages")).status_code == 200
    assert readonly_api.get(conv_url("c1")).status_code == 200
    assert readonly_api.get("/v1/conversations").status_code == 200
    assert readonly_api.get(conv_url("c1", "/branches")).status_code == 200
    writes = [
        readonly_api.post(conv_url("c1", "/messages"), {"role": "user", "content": "x"}, format="json"),
        readonly_api.post(conv_url("new", "/messages"), {"role": "user", "content": "x"}, format="json"),
        readonly_api.post("/v1/conversations", {"conversation_id": "c9"}, format="json"),
        readonly_api.patch(conv_url("c1"), {"metadata": {"a": 1}}, format="json"),
        readonly_api.delete(conv_url("c1")),
        readonly_api.delete(conv_url("c1", "/messages")),
        readonly_api.patch(conv_url("c1", f"/messages/{message['id']}"), {"content": "x"}, format="json"),
        readonly_api.delete(conv_url("c1", f"/messages/{message['id']}")),
        readonly_api.post(conv_url("c1", "/branches"), {"name": "b", "from_message_id": message["id"]}, format="json"),
    ]
    for response in writes:
        assert_error(response, 403, "permission_error")
    assert Message.objects.count() == 1 and Conversation.objects.count() == 1


def test_missing_bad_and_revoked_keys_are_401(api, anon_api, api_key):
    from django.utils import timezone
    from rest_framework.test import APIClient

    assert_error(anon_api.get("/v1/conversations"), 401, "authentication_error")
    assert_error(anon_api.post(conv_url("c", "/messages"), {"role": "user", "content": "x"}, format="json"), 401, "authentication_error")
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Bearer mk_000000000000_nope")
    assert_error(bad.get(conv_url("c", "/messages")), 401, "authentication_error")
    ApiKey.objects.update(revoked_at=timezone.now())
    assert_error(api.get("/v1/conversations"), 401, "authentication_error")
    assert not Message.objects.exists()


def test_x_api_key_header_works(api_key):
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_X_API_KEY=api_key)
    assert append(client, "c1").status_code == 201


def test_invalid_utf8_in_the_path_is_400_not_an_alias(api):
    """A raw %FF is not the id spelt "%FF" (sent as %25FF), although both reach
    Django as the path `%FF`: the raw path the server reports tells them apart."""
    append_ok(api, "%FF")
    literal = api.get("/v1/conversations/%25FF", RAW_URI="/v1/conversations/%25FF")
    assert literal.json()["data"]["conversation_id"] == "%FF"
    for raw in ("/v1/conversations/%FF", "/v1/conversations/%C3%28/messages", "/v1/memories/%E4%BD?limit=1"):
        response = api.get(raw.split("?")[0], RAW_URI=raw)
        assert_error(response, 400, "invalid_request_error")
    # Real UTF-8 in the path passes the guard.
    assert api.get("/v1/conversations/%E4%BD%A0", RAW_URI="/v1/conversations/%E4%BD%A0").status_code == 404
