"""Input and output serializers of the conversations API.

Timestamps are integer milliseconds since the epoch (spec 000's `createdAt`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from conversations.models import MAIN_BRANCH, Branch, Conversation, Message, Role
from conversations.services import MAX_MESSAGES_PER_BATCH
from memory_project.db import json_text
from memory_project.fields import StrictCharField


def epoch_ms(value: datetime | None) -> int | None:
    return None if value is None else int(value.timestamp() * 1000)


@extend_schema_field(OpenApiTypes.INT)
class EpochMsField(serializers.Field):
    def to_representation(self, value: datetime | None) -> int | None:
        return epoch_ms(value)


class AnyJSONField(serializers.JSONField):
    """JSON of any type; the service decides which types are allowed."""


class StrictIntegerField(serializers.IntegerField):
    default_error_messages = {"invalid": "must be an integer."}


# --- Inputs ---------------------------------------------------------------------


class _PagingInputSerializer(serializers.Serializer):
    limit = StrictIntegerField(required=False, default=20, min_value=1, max_value=100)
    order = serializers.ChoiceField(choices=["asc", "desc"], required=False)
    after = StrictCharField(required=False, max_length=512)
    before = StrictCharField(required=False, max_length=512)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("after") and attrs.get("before"):
            raise serializers.ValidationError("after and before are mutually exclusive.")
        return attrs


class MessageListInputSerializer(_PagingInputSerializer):
    branch = StrictCharField(required=False, default=MAIN_BRANCH, max_length=128)
    format = serializers.ChoiceField(choices=["anthropic", "openai"], required=False)


class ConversationListInputSerializer(_PagingInputSerializer):
    user_id = StrictCharField(required=False, max_length=256)
    source = StrictCharField(required=False, max_length=40)


class MessageAppendInputSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)
    content = AnyJSONField()
    metadata = serializers.DictField(required=False, allow_empty=True)
    user_id = StrictCharField(required=False, allow_null=True, max_length=256)
    branch = StrictCharField(required=False, default=MAIN_BRANCH, max_length=128)


class BoundedListSerializer(serializers.ListSerializer):
    """A list of nested objects whose `min_length` / `max_length` the schema
    shows as `minItems` / `maxItems` (see `BoundedListSerializerExtension`)."""


class BoundedListSerializerExtension(OpenApiSerializerFieldExtension):
    target_class = BoundedListSerializer

    def map_serializer_field(self, auto_schema, direction):
        component = auto_schema.resolve_serializer(self.target.child, direction)
        schema: dict[str, Any] = {"type": "array", "items": component.ref}
        if self.target.min_length is not None:
            schema["minItems"] = self.target.min_length
        elif not self.target.allow_empty:
            schema["minItems"] = 1
        if self.target.max_length is not None:
            schema["maxItems"] = self.target.max_length
        return schema


class MessageBatchItemInputSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)
    content = AnyJSONField()
    metadata = serializers.DictField(required=False, allow_empty=True)
    idempotency_key = StrictCharField(
        required=False,
        max_length=255,
        help_text=(
            "This message's own idempotency key (unique per workspace). Without one, a request's "
            "Idempotency-Key header gives the message `<header>:<index>`."
        ),
    )

    class Meta:
        list_serializer_class = BoundedListSerializer


class MessageBatchAppendInputSerializer(serializers.Serializer):
    """`{"messages": [...]}`: up to 100 messages appended in order, all or none."""

    messages = MessageBatchItemInputSerializer(many=True, allow_empty=False, max_length=MAX_MESSAGES_PER_BATCH)
    user_id = StrictCharField(required=False, allow_null=True, max_length=256)
    branch = StrictCharField(required=False, default=MAIN_BRANCH, max_length=128)


class MessageUpdateInputSerializer(serializers.Serializer):
    content = AnyJSONField(required=False)
    metadata = serializers.DictField(required=False, allow_empty=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError("give content and/or metadata to update.")
        return attrs


class ConversationCreateInputSerializer(serializers.Serializer):
    conversation_id = StrictCharField(trim_whitespace=False, max_length=256)
    user_id = StrictCharField(required=False, allow_null=True, max_length=256)
    metadata = serializers.DictField(required=False, allow_empty=True)


class ConversationUpdateInputSerializer(serializers.Serializer):
    metadata = serializers.DictField(required=False, allow_empty=True)
    user_id = StrictCharField(required=False, allow_null=True, max_length=256)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError("give metadata and/or user_id to update.")
        return attrs


class BranchCreateInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=128, trim_whitespace=False)
    from_message_id = StrictCharField(max_length=64)


# --- Outputs --------------------------------------------------------------------


class ConversationOutputSerializer(serializers.ModelSerializer):
    conversation_id = serializers.CharField(source="external_id")
    created_at = EpochMsField()
    last_message_at = EpochMsField(allow_null=True)  # null until the first message

    class Meta:
        model = Conversation
        fields = ["conversation_id", "user_id", "created_at", "last_message_at", "message_count", "metadata", "source"]


class MessageOutputSerializer(serializers.ModelSerializer):
    """Needs `conversation_id` and `branch_names` ({branch pk: name}) in the context,
    so a page of messages costs no query per row."""

    message_id = serializers.CharField(source="id")
    conversation_id = serializers.SerializerMethodField()
    branch = serializers.SerializerMethodField()
    created_at = EpochMsField()
    updated_at = EpochMsField(allow_null=True)  # null until the message is edited

    class Meta:
        model = Message
        fields = [
            "id",
            "message_id",
            "conversation_id",
            "branch",
            "floor_no",
            "role",
            "content",
            "metadata",
            "created_at",
            "updated_at",
        ]

    def get_conversation_id(self, message: Message) -> str:
        return self.context["conversation_id"]

    def get_branch(self, message: Message) -> str:
        names = self.context.get("branch_names") or {}
        return names.get(message.branch_id) or message.branch.name

    def to_representation(self, message: Message) -> dict[str, Any]:
        return message_data(message, conversation_id=self.get_conversation_id(message), branch=self.get_branch(message))


def message_data(message: Any, *, conversation_id: str, branch: str, as_stored: bool = False) -> dict[str, Any]:
    """A message as the API writes it (`MessageOutputSerializer`'s fields,
    written out): a page of messages is the API's most frequent answer, and
    DRF's per-field machinery cost more than the query that read it. The
    serializer's declared fields stay for the schema. `message` is a `Message`
    or a `selectors.MessageRow`; with `as_stored` (a row), its content and
    metadata go into the answer as stored, unread (`StoredJson`)."""
    if as_stored:
        content, metadata = json_text(message.stored_content), json_text(message.stored_metadata)
    else:
        content, metadata = message.content, message.metadata
    return {
        "id": message.pk,
        "message_id": message.pk,
        "conversation_id": conversation_id,
        "branch": branch,
        "floor_no": message.floor_no,
        "role": message.role,
        "content": content,
        "metadata": metadata,
        "created_at": epoch_ms(message.created_at),
        "updated_at": epoch_ms(message.updated_at),
    }


class BranchOutputSerializer(serializers.ModelSerializer):
    parent = serializers.SerializerMethodField()
    created_at = EpochMsField()

    class Meta:
        model = Branch
        fields = ["id", "name", "parent", "fork_message_id", "fork_floor_no", "created_at"]

    def get_parent(self, branch: Branch) -> str | None:
        return branch.parent.name if branch.parent_id else None
