"""The query analysed for context is bounded before analysis: the default
query (the latest user message) may be megabytes; it is cut to the first
MAX_QUERY_CHARS characters, MAX_QUERY_BYTES bytes and MAX_QUERY_TERMS words."""

from __future__ import annotations

import pytest

from memories.recall import context as recall_context
from memories.recall.context import MAX_QUERY_BYTES, MAX_QUERY_CHARS, MAX_QUERY_TERMS, bounded_query
from tests.conversations.helpers import append_ok, conv_url

pytestmark = pytest.mark.django_db


def test_bounded_query_cuts_terms_chars_and_bytes():
    assert bounded_query("tea and biscuits") == "tea and biscuits"
    words = bounded_query("word " * 10_000)
    assert len(words.split()) == MAX_QUERY_TERMS
    chinese = bounded_query("鲸" * 100_000)
    assert len(chinese) <= MAX_QUERY_CHARS and len(chinese.encode()) <= MAX_QUERY_BYTES
    assert len(bounded_query("x" * 100_000)) == MAX_QUERY_CHARS


def test_a_huge_last_message_is_not_analysed_whole(api, monkeypatch):
    seen = []
    select = recall_context.recall_select

    def spy(**kwargs):
        seen.append(kwargs["query"])
        return select(**kwargs)

    monkeypatch.setattr(recall_context, "recall_select", spy)
    append_ok(api, "big", "penicillin allergy notes " * 270_000)  # ~6.7 MB
    response = api.post(conv_url("big", "/context"), {}, format="json")
    assert response.status_code == 200
    assert len(seen) == 1 and len(seen[0]) <= MAX_QUERY_CHARS and len(seen[0].split()) <= MAX_QUERY_TERMS
    assert response.json()["data"]["memory"]["query"] == seen[0]
