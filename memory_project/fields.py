"""Serializer fields shared by every app."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


class StrictCharField(serializers.CharField):
    """A string that must arrive as a JSON string.

    DRF's `CharField` turns numbers into text (`0` -> "0"), so an integer id
    would be stored as a different value than the client believes it sent.
    Booleans and containers are refused by `CharField` already; this refuses
    numbers too.
    """

    default_error_messages = {"invalid": "must be a string."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)
