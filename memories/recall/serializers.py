"""Input of `POST /v1/conversations/{cid}/context`."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from memories.llm.tokens import ENCODING_NAME
from memories.recall.selection import STRATEGIES
from memory_project.fields import StrictCharField

MAX_TEMPORARY_MESSAGES = 100


class TemporaryMessageSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["user", "assistant", "system", "tool"])
    content = serializers.JSONField()
    metadata = serializers.DictField(required=False)

    def validate_content(self, value: Any) -> Any:
        if value is None:
            raise serializers.ValidationError("must not be null.")
        return value


class ContextAssembleInputSerializer(serializers.Serializer):
    branch = StrictCharField(required=False, allow_null=True, max_length=128, default=None)
    max_messages = serializers.IntegerField(required=False, min_value=0, max_value=1000, default=10)
    truncate_chars = serializers.IntegerField(required=False, min_value=1, max_value=10_000_000, allow_null=True,
                                              default=None)
    system = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=200_000,
                                   trim_whitespace=False, default=None)
    temporary_messages = TemporaryMessageSerializer(many=True, required=False, default=list)
    query = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=4000, default=None)
    strategy = serializers.ChoiceField(choices=list(STRATEGIES), required=False, default="balanced")
    memory_token_budget = serializers.IntegerField(
        required=False, min_value=0, max_value=200_000, default=1000,
        help_text=f"Tokens the memory section may take, the rolling summary, header and labels included, counted "
                  f"with the {ENCODING_NAME} tokenizer (OpenAI's BPE, bundled, whatever the model). A ceiling: "
                  f"only memories relevant to the query (or pinned) are injected, however much room is left.")
    include_memories = serializers.BooleanField(required=False, default=True)
    include_summary = serializers.BooleanField(required=False, default=True)
    format = serializers.ChoiceField(choices=["raw", "anthropic", "openai"], required=False, default="raw")

    def validate_temporary_messages(self, value: list) -> list:
        if len(value) > MAX_TEMPORARY_MESSAGES:
            raise serializers.ValidationError(f"at most {MAX_TEMPORARY_MESSAGES} messages.")
        return value

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({unknown[0]: ["unknown field."]})
        return super().to_internal_value(data)
