"""OpenAPI shapes of the conversations API's `{"data": ..., "meta": {...}}`
envelopes (drf-spectacular), kept apart from the views so they stay thin."""

from __future__ import annotations

from drf_spectacular.utils import (
    PolymorphicProxySerializer,
    extend_schema_field,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import serializers

from conversations.serializers import (
    BranchOutputSerializer,
    ConversationOutputSerializer,
    MessageAppendInputSerializer,
    MessageBatchAppendInputSerializer,
    MessageOutputSerializer,
)


def envelope(name: str, **fields: serializers.Field) -> type[serializers.Serializer]:
    """A named `{"data": ..., "meta": ...}` component. `many=False` stops the
    generator from documenting a list action's answer as a bare array."""
    return extend_schema_serializer(many=False)(type(name, (serializers.Serializer,), fields))


def _cursor_meta(name: str) -> serializers.Serializer:
    return inline_serializer(
        name=name,
        fields={
            "next_cursor": serializers.CharField(allow_null=True),
            "previous_cursor": serializers.CharField(allow_null=True),
        },
    )


def data_envelope(name: str, serializer: type[serializers.Serializer]) -> serializers.Serializer:
    """`{"data": <one object>}`."""
    return inline_serializer(name=name, fields={"data": serializer()})


ConversationEnvelope = data_envelope("ConversationEnvelope", ConversationOutputSerializer)
MessageEnvelope = data_envelope("MessageEnvelope", MessageOutputSerializer)
MessageBatchEnvelope = inline_serializer(
    name="MessageBatchEnvelope", fields={"data": MessageOutputSerializer(many=True)}
)
# POST .../messages takes one message or `{"messages": [...]}`, and answers
# with the same shape it was given.
MessageAppendRequest = PolymorphicProxySerializer(
    component_name="MessageAppend",  # documented as MessageAppendRequest (request components get the suffix)
    serializers=[MessageAppendInputSerializer, MessageBatchAppendInputSerializer],
    resource_type_field_name=None,
)
MessageAppendAnswer = PolymorphicProxySerializer(
    component_name="MessageAppendAnswer",
    serializers=[MessageEnvelope, MessageBatchEnvelope],
    resource_type_field_name=None,
)

ConversationPage = envelope(
    "ConversationPage", data=ConversationOutputSerializer(many=True), meta=_cursor_meta("ConversationPageMeta")
)

ConversationCleared = inline_serializer(
    name="ConversationCleared",
    fields={
        "data": ConversationOutputSerializer(),
        "meta": inline_serializer(name="ConversationClearedMeta", fields={"deleted_count": serializers.IntegerField()}),
    },
)


@extend_schema_field(
    {
        "description": (
            "The messages as stored; with `format=openai` Chat Completions messages; "
            "with `format=anthropic` an object `{system, messages}` for the Messages API."
        ),
        "anyOf": [
            {"type": "array", "items": {"$ref": "#/components/schemas/MessageOutput"}},
            {"type": "array", "items": {"type": "object", "additionalProperties": {}}},
            {
                "type": "object",
                "properties": {
                    "system": {"type": "string", "nullable": True},
                    "messages": {"type": "array", "items": {"type": "object", "additionalProperties": {}}},
                },
                "required": ["system", "messages"],
            },
        ],
    }
)
class _FormattedMessagesField(serializers.JSONField):
    """Schema-only: a page's `data` in the format `?format=` asked for."""


MessagePage = envelope("MessagePage", data=_FormattedMessagesField(), meta=_cursor_meta("MessagePageMeta"))

BranchEnvelope = inline_serializer(name="BranchEnvelope", fields={"data": BranchOutputSerializer()})
BranchList = envelope("BranchList", data=BranchOutputSerializer(many=True))
