"""The API's JSON renderer writes what DRF's JSONRenderer writes, byte for
byte, for the values answers carry; what orjson cannot write the same way
goes to DRF's renderer."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal

import pytest
from django.utils.translation import gettext_lazy
from rest_framework.renderers import JSONRenderer

from memory_project.db import StoredJson
from memory_project.renderers import ApiJSONRenderer

MOMENT = dt.datetime(2026, 11, 23, 17, 30, 5, 123456, tzinfo=dt.UTC)

VALUES = [
    {"data": [{"id": "msg_1", "floor_no": 3, "content": [{"type": "text", "text": "héllo 你好 🎉"}], "metadata": {}}],
     "meta": {"next_cursor": None, "previous_cursor": "abc"}},
    {"line separators": "a\u2028b\u2029c", "quote": 'say "hi"\n\ttab\\'},
    {"moment": MOMENT, "day": MOMENT.date(), "time": MOMENT.time(), "naive": MOMENT.replace(tzinfo=None)},
    {"uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"), "decimal": Decimal("1.25"), "lazy": gettext_lazy("Name")},
    {"big": 2**64, "negative big": -(2**63) - 1, "u64": 2**64 - 1},
    {1: "int key", None: "none key", "nested": {"t": (1, 2), "empty": [], "bool": [True, False]}},
    [],
    "plain",
]


@pytest.mark.parametrize("value", VALUES)
def test_the_same_bytes_as_drf(value):
    assert ApiJSONRenderer().render(value) == JSONRenderer().render(value)


def test_floats_are_the_same_numbers():
    value = {"scores": [0.1, 1.0, 1e16, 2.5e-8, -3.75, 123456.789]}
    assert json.loads(ApiJSONRenderer().render(value)) == value


def test_indentation_asked_for_is_drfs():
    value = {"a": [1, {"b": "c"}]}
    accepted = "application/json; indent=4"
    assert ApiJSONRenderer().render(value, accepted) == JSONRenderer().render(value, accepted)
    assert b"\n    " in ApiJSONRenderer().render(value, accepted)


def test_nothing_renders_as_an_empty_body():
    assert ApiJSONRenderer().render(None) == b""


def test_what_drf_refuses_is_refused():
    with pytest.raises(TypeError):
        ApiJSONRenderer().render({"object": object()})


def test_api_answers_use_it(api):
    response = api.get("/v1/conversations")
    assert response.status_code == 200
    assert isinstance(response.accepted_renderer, ApiJSONRenderer)
    assert json.loads(response.content)["data"] == []


STORED = {"content": [{"type": "text", "text": "héllo 你好 🎉 a\u2028b", "n": 2**70, "f": 0.1}],
          "metadata": {"nested": {"list": [1, None, True, "x"]}, "empty": {}}}


def test_a_stored_json_text_is_written_as_it_is_and_read_as_its_value():
    stored = {name: StoredJson(json.dumps(value)) for name, value in STORED.items()}
    written = ApiJSONRenderer().render({"data": [stored]})
    # The same document DRF writes from the values themselves (the text's own
    # spacing aside), line separators escaped as DRF escapes them.
    assert json.loads(written) == {"data": [STORED]}
    assert "\u2028".encode() not in written and b"\\u2028" in written
    assert stored["content"] == STORED["content"] and stored["content"].value() == STORED["content"]
    # What goes to DRF's renderer (an indentation asked for) decodes it.
    indented = ApiJSONRenderer().render({"data": [stored]}, "application/json; indent=2")
    assert indented == JSONRenderer().render({"data": [STORED]}, "application/json; indent=2")


@pytest.mark.parametrize("format_", [None, "anthropic", "openai"])
def test_a_page_answers_each_messages_json_as_it_was_appended(api, format_):
    appended = {"role": "user", "content": STORED["content"], "metadata": STORED["metadata"]}
    assert api.post("/v1/conversations/stored/messages", appended, format="json").status_code == 201
    query = {"format": format_} if format_ else {}
    page = api.get("/v1/conversations/stored/messages", query)
    assert page.status_code == 200
    data = json.loads(page.content)["data"]
    if format_ is None:
        assert data[0]["content"] == STORED["content"] and data[0]["metadata"] == STORED["metadata"]
        # What a Python caller reads, too: a message (on PostgreSQL read
        # already written, a `StoredJson` of it) equals its value.
        assert page.data["data"][0] == data[0]
    else:  # built from the decoded content
        assert "héllo 你好 🎉" in json.dumps(data, ensure_ascii=False)
