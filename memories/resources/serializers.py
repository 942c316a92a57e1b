"""Wire shapes of a conversation's attached memory stores."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from memories.resources.selectors import AttachedStore
from memory_project.fields import StrictCharField


class ConversationResourcesInputSerializer(serializers.Serializer):
    """`{"resources": [...]}`, or spec 001's shorthand `{"memory_store_ids": [...]}`
    (each attached read-write). Each entry's rules live in the service."""

    resources = serializers.JSONField(required=False)
    memory_store_ids = serializers.ListField(child=StrictCharField(), required=False)

    def validate(self, attrs):
        if ("resources" in attrs) == ("memory_store_ids" in attrs):
            raise serializers.ValidationError("Send exactly one of 'resources' and 'memory_store_ids'.")
        if "memory_store_ids" in attrs:
            attrs["resources"] = [
                {"type": "memory_store", "memory_store_id": store_id} for store_id in attrs.pop("memory_store_ids")
            ]
        return attrs


class ConversationResourceOutputSerializer(serializers.Serializer):
    """One attachment: what was sent, plus snapshots of the store's `name` and
    `description` and the `mount_path` the agent sees it under, taken at the
    last PUT."""

    def to_representation(self, attached: AttachedStore) -> dict[str, Any]:
        row = attached.resource
        return {
            "type": "memory_store",
            "memory_store_id": row.memory_store_id,
            "access": row.access,
            "instructions": row.instructions,
            "name": row.store_name or row.memory_store.name,
            "description": row.store_description if row.mount_path else row.memory_store.description,
            "mount_path": attached.mount_path,
        }


def resources_payload(conversation_id: str, attached: list[AttachedStore]) -> dict[str, Any]:
    return {
        "data": {
            "conversation_id": conversation_id,
            "resources": ConversationResourceOutputSerializer(attached, many=True).data,
        }
    }
