"""The console's small defects of issue 44, each as an operator meets it:
dates in one format, floor numbers instead of message ids, edges with the
text they point at, review context that belongs to the item, redaction
that never ends in "nothing to do", previews that count what results count."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_conversation_page_dates_and_summary_floor(admin_client, conversation_with_floors):
    conversation, branch, messages = conversation_with_floors
    # The summarizer records the last message it read, by id.
    conversation.metadata = {"summary": "User likes coffee.", "summarized_until": messages[2].pk}
    conversation.save(update_fields=["metadata"])
    html = admin_client.get(reverse("admin:conversations_conversation_change", args=[conversation.pk])).content.decode()
    assert "until floor msg_" not in html
    until = re.search(r'class="quiet summary-until">\(until <a href="([^"]+)">floor (\d+)</a>\)', html)
    assert until and until.group(2) == "3"
    assert until.group(1).endswith(f"#floor-{branch.pk}-3")
    # The console's one date format, never Django's "Nov. 29, 2026, 10:14 a.m.".
    created = f"{conversation.created_at:%Y-%m-%d %H:%M:%S}"
    assert created in html
    assert not re.search(r"\b(a\.m\.|p\.m\.)", html)


def test_conversation_list_dates_in_console_format(admin_client, conversation_with_floors):
    conversation, _branch, _messages = conversation_with_floors
    conversation.last_message_at = conversation.created_at
    conversation.save(update_fields=["last_message_at"])
    html = admin_client.get(reverse("admin:conversations_conversation_changelist")).content.decode()
    assert f"{conversation.last_message_at:%Y-%m-%d %H:%M:%S}" in html
    assert not re.search(r"\b(a\.m\.|p\.m\.)", html)
