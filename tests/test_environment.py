"""Typed reads of environment variables (`memory_project.environment`)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from memory_project.environment import env_float_map

KEYS = {"cjk>cjk", "latin>cjk"}


def test_a_float_map_takes_its_default_when_unset_and_the_pairs_given_otherwise(monkeypatch):
    monkeypatch.delenv("TEST_SHIFT", raising=False)
    assert env_float_map("TEST_SHIFT", {"cjk>cjk": 0.05}, keys=KEYS) == {"cjk>cjk": 0.05}
    monkeypatch.setenv("TEST_SHIFT", " cjk>cjk:0.06, latin>cjk:-0.03 ")
    assert env_float_map("TEST_SHIFT", {"cjk>cjk": 0.05}, keys=KEYS) == {"cjk>cjk": 0.06, "latin>cjk": -0.03}
    monkeypatch.setenv("TEST_SHIFT", "")
    assert env_float_map("TEST_SHIFT", {"cjk>cjk": 0.05}, keys=KEYS) == {}


@pytest.mark.parametrize("value", ["cjk>cjk", "cjk>cjk:high", "greek>cjk:0.1", ":0.1"])
def test_a_malformed_float_map_stops_the_start_with_the_name_and_the_part(monkeypatch, value):
    monkeypatch.setenv("TEST_SHIFT", value)
    with pytest.raises(ImproperlyConfigured, match="TEST_SHIFT.*got"):
        env_float_map("TEST_SHIFT", {}, keys=KEYS)
