"""A conversation's user is fixed once set: an append (one message or a
batch) or an update naming another user is a 409 that changes nothing, so a
user's floors are never filed under another user's scope."""

from __future__ import annotations

import pytest
from django.test import override_settings

from conversations.models import Conversation, Message
from memories.models import MemoryItem, Scope
from tests.conversations.helpers import append, append_ok, assert_error, conv_url
from tests.memories.pipeline_helpers import eager_celery

pytestmark = pytest.mark.django_db(transaction=True)


def test_another_user_on_a_later_append_is_a_409_that_changes_nothing(api):
    append_ok(api, "c1", "I am allergic to penicillin.", user_id="alice")
    body = assert_error(append(api, "c1", "hello", "user", user_id="bob"), 409, "conflict_error")
    assert "fixed once set" in body["message"]
    batch = api.post(conv_url("c1", "/messages"), {"messages": [{"role": "user", "content": "x"}], "user_id": "bob"},
                     format="json")
    assert_error(batch, 409, "conflict_error")
    conversation = Conversation.objects.get(external_id="c1")
    assert conversation.user_id == "alice" and conversation.message_count == 1
    assert Message.objects.filter(conversation=conversation).count() == 1
    # The same user, or none, appends as before.
    append_ok(api, "c1", "again", user_id="alice")
    append_ok(api, "c1", "and without naming the user")
    assert Conversation.objects.get(external_id="c1").user_id == "alice"


def test_a_user_is_set_once_on_a_conversation_that_had_none(api):
    append_ok(api, "c2", "hi")
    append_ok(api, "c2", "hi again", user_id="carol")
    assert Conversation.objects.get(external_id="c2").user_id == "carol"
    assert_error(append(api, "c2", "x", "user", user_id="dave"), 409, "conflict_error")


PIPELINE = {"MEMORY_EXTRACT_MIN_FLOORS": 2, "MEMORY_EXTRACT_BATCH_FLOORS": 10, "MEMORY_EXTRACT_MIN_TOKENS": 10**6}


def test_user_facts_come_only_from_that_users_floors(api):
    with eager_celery(), override_settings(**PIPELINE):
        append_ok(api, "c3", "I am allergic to penicillin.", user_id="alice")
        assert_error(append(api, "c3", "My name is Bob.", "user", user_id="bob"), 409, "conflict_error")
        append_ok(api, "c3", "Noted.", "assistant")
        append_ok(api, "c4", "I like tea.", user_id="bob")
        append_ok(api, "c4", "Noted.", "assistant")
    bob_facts = MemoryItem.objects.filter(scope=Scope.USER, scope_id="bob").values_list("content", flat=True)
    assert not any("penicillin" in content for content in bob_facts)
    context = api.post(conv_url("c4", "/context"), {"query": "allergic penicillin"}, format="json")
    assert context.status_code == 200
    assert "allergic to penicillin" not in context.content.decode()
