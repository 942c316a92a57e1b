"""A page of messages answers every kind of value a message holds as it was
stored, on every path a page is read (a branch that is no fork in one
statement, a fork through its segments)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection  # noqa: F401 - read by the skipif condition

from conversations.models import Message
from conversations.selectors.messages import MessageRow, message_page
from tests.conversations.helpers import append_ok, conv_url, messages

pytestmark = pytest.mark.django_db

CONTENTS = [
    "plain",
    "",
    'quotes " and \\ backslashes \\" and a tab\t, a newline\n, a bell \x07 and \x1f',
    "non-ASCII: cafe\u0301, \u00e9t\u00e9, \u2603, \U0001f600, line separators \u2028 and \u2029",
    ["a", {"type": "text", "text": "nested \u2028"}],
    {"type": "image", "url": "https://x/?a=1&b=2", "n": 12345678901234567890123, "f": 1.5e-300, "t": True, "z": None},
    [{"type": "tool_use", "id": "t1", "input": {"deep": [[[{"k": "v"}]]]}}],
]
METADATA = [{}, {"source": "web", "score": -0.0, "big": 2**70, "list": [1, "2", None]}, {"\u2028key": "NUL-free \u00ff"}]
# The times a message may carry: microseconds either side of a millisecond,
# before 1970 and far ahead.
MOMENTS = [
    datetime(2026, 11, 24, 20, 0, 0, 999_999, tzinfo=UTC),
    datetime(2026, 11, 24, 20, 0, 1, 0, tzinfo=UTC),
    datetime(2026, 11, 24, 20, 0, 1, 1_000, tzinfo=UTC),
    datetime(2026, 11, 24, 20, 0, 1, 340_000, tzinfo=UTC),
    datetime(1969, 12, 31, 23, 59, 59, 999_500, tzinfo=UTC),
    datetime(1901, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
    datetime(2999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
]


def _seed(api, cid: str) -> list[str]:
    ids = []
    for n, content in enumerate(CONTENTS * 2):
        ids.append(append_ok(api, cid, content, role="user" if n % 2 else "assistant", metadata=METADATA[n % 3])["id"])
    for n, message_id in enumerate(ids):
        moment = MOMENTS[n % len(MOMENTS)]
        edited = moment + timedelta(microseconds=n * 7919) if n % 3 else None
        Message.objects.filter(pk=message_id).update(created_at=moment, updated_at=edited)
    return ids


@pytest.mark.parametrize("cid", ["c1", "caf\u00e9 \"quoted\" \\ \u2028 \U0001f600", "with spaces & ?query#frag"])
def test_a_page_answers_each_value_as_stored(api, cid):
    ids = _seed(api, cid)
    stored = {m.pk: m for m in Message.objects.filter(pk__in=ids)}
    queries = [
        ({}, ids[:20]),
        ({"limit": 3}, ids[:3]),
        ({"order": "desc", "limit": 4}, ids[::-1][:4]),
        ({"after": ids[2], "limit": 5}, ids[3:8]),
        ({"before": ids[9], "limit": 3}, ids[6:9]),
        ({"before": ids[9], "order": "desc", "limit": 3}, ids[10:13][::-1]),
        ({"branch": "main", "after": ids[-1]}, []),
    ]
    for query, expected in queries:
        response = messages(api, cid, **query)
        assert response.status_code == 200, (query, response.content)
        data = response.json()["data"]
        assert [m["id"] for m in data] == expected, query
        for message in data:
            row = stored[message["id"]]
            assert message["conversation_id"] == cid and message["branch"] == "main"
            assert (message["role"], message["content"], message["metadata"]) == (row.role, row.content, row.metadata)


def test_the_times_are_epoch_milliseconds_as_python_counts_them(api):
    ids = _seed(api, "times")
    page = messages(api, "times", limit=100).json()["data"]
    for message_id, message in zip(ids, page, strict=True):
        stored = Message.objects.get(pk=message_id)
        assert message["created_at"] == int(stored.created_at.timestamp() * 1000)
        expected = None if stored.updated_at is None else int(stored.updated_at.timestamp() * 1000)
        assert message["updated_at"] == expected


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_on_postgresql_a_page_is_one_statement(api, workspace, django_assert_num_queries):
    ids = _seed(api, "one")
    with django_assert_num_queries(1):
        page = message_page(workspace=workspace, external_id="one", limit=3, after=ids[0])
    assert [type(m) for m in page.messages] == [MessageRow] * 3
    assert [m.pk for m in page.messages] == ids[1:4]
    assert (page.next_cursor, page.previous_cursor) == (ids[3], ids[1])


def test_a_fork_and_the_other_formats_are_read_from_the_rows(api, workspace):
    ids = _seed(api, "forked")
    response = api.post(conv_url("forked", "/branches"), {"name": "alt", "from_message_id": ids[3]}, format="json")
    assert response.status_code == 201, response.content
    append_ok(api, "forked", "on the fork", branch="alt")
    page = message_page(workspace=workspace, external_id="forked", branch_name="alt", limit=100)
    assert all(type(m) is MessageRow for m in page.messages)
    data = messages(api, "forked", branch="alt", limit=100).json()["data"]
    assert [m["id"] for m in data[:4]] == ids[:4] and data[-1]["content"] == "on the fork"
    assert {m["branch"] for m in data} == {"main", "alt"}
    for fmt in ("anthropic", "openai"):
        assert messages(api, "forked", format=fmt).status_code == 200
