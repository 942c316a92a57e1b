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
