"""OpenAPI shapes of the conversations API's `{"data": ..., "meta": {...}}`
envelopes (drf-spectacular), kept apart from the views so they stay thin."""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiParameter,
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


class LineageSerializer(serializers.Serializer):
    """What the memory service erased along with a change (erasure that follows
    lineage): the memories derived from the removed text, deleted with all of
    their versions; the rolling summaries cleared; the jobs queued to derive
    them again from what remains. Present when the memory service is installed."""

    memories_deleted = serializers.IntegerField()
    memory_ids = serializers.ListField(child=serializers.CharField(), allow_null=True)
    summaries_cleared = serializers.IntegerField()
    rederive_job_ids = serializers.ListField(child=serializers.CharField())


def lineage_field() -> serializers.Serializer:
    return LineageSerializer(required=False)


ConversationCleared = inline_serializer(
    name="ConversationCleared",
    fields={
        "data": ConversationOutputSerializer(),
        "meta": inline_serializer(name="ConversationClearedMeta", fields={"deleted_count": serializers.IntegerField()}),
        "lineage": lineage_field(),
    },
)
MessageUpdated = inline_serializer(
    name="MessageUpdated", fields={"data": MessageOutputSerializer(), "lineage": lineage_field()}
)
DeletedWithLineage = inline_serializer(
    name="DeletedWithLineage",
    fields={
        "data": inline_serializer(
            name="DeletedObject", fields={"id": serializers.CharField(), "deleted": serializers.BooleanField()}
        ),
        "lineage": lineage_field(),
    },
)
PREFER_PARAMETER = OpenApiParameter(
    name="Prefer",
    location=OpenApiParameter.HEADER,
    required=False,
    type=str,
    description=(
        "`return=representation`: answer 200 with `{data, lineage}` instead of 204. A 204 carries the "
        "lineage object as JSON in its `Memory-Lineage` header (`memory_ids` null when too long for a header)."
    ),
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
