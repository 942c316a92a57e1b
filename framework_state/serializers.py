"""Request shapes of the framework endpoints. Bodies are checked field by field
in the services (they are the framework's own opaque JSON); these serializers
parse what the views read from query strings."""

from __future__ import annotations

import base64
import binascii
import json

from rest_framework import serializers

from framework_state.selectors import CHECKPOINT_PAGE_SIZE


class SessionKeyQuerySerializer(serializers.Serializer):
    project_key = serializers.CharField(trim_whitespace=False)
    session_id = serializers.CharField(trim_whitespace=False)
    subpath = serializers.CharField(required=False, trim_whitespace=False)


class ProjectQuerySerializer(serializers.Serializer):
    project_key = serializers.CharField(trim_whitespace=False)


class SessionItemsQuerySerializer(serializers.Serializer):
    # No upper bound: `get_items(limit=N)` asks for the latest N, whatever N is.
    limit = serializers.IntegerField(required=False, allow_null=True)


class CheckpointTupleQuerySerializer(serializers.Serializer):
    thread_id = serializers.CharField(trim_whitespace=False)
    checkpoint_ns = serializers.CharField(required=False, allow_blank=True, default="", trim_whitespace=False)
    checkpoint_id = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class CheckpointListQuerySerializer(serializers.Serializer):
    thread_id = serializers.CharField(required=False, trim_whitespace=False)
    # Absent: every namespace; present (even empty): that namespace only.
    checkpoint_ns = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    checkpoint_id = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    before = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    filter = serializers.CharField(required=False, trim_whitespace=False)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=CHECKPOINT_PAGE_SIZE, default=CHECKPOINT_PAGE_SIZE)
    cursor = serializers.CharField(required=False, trim_whitespace=False)

    def validate_filter(self, value: str) -> dict:
        try:
            parsed = json.loads(value)
        except ValueError:
            raise serializers.ValidationError("must be a JSON object.")
        if not isinstance(parsed, dict):
            raise serializers.ValidationError("must be a JSON object.")
        return parsed

    def validate_cursor(self, value: str) -> tuple[str, int]:
        try:
            checkpoint_id, _, pk = base64.urlsafe_b64decode(value.encode("ascii")).decode("utf-8").rpartition("|")
            return checkpoint_id, int(pk)
        except (binascii.Error, UnicodeError, ValueError):
            raise serializers.ValidationError("is not a cursor this endpoint returned.")


def encode_checkpoint_cursor(cursor: tuple[str, int] | None) -> str | None:
    if cursor is None:
        return None
    return base64.urlsafe_b64encode(f"{cursor[0]}|{cursor[1]}".encode()).decode("ascii")
