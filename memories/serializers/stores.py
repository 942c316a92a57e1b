"""Wire shapes of the memory-store dialect, matching the `anthropic` SDK's
`client.beta.memory_stores` types (bare objects with a `type` field).

Input serializers check presence and pass raw values on; the services own the
strict rules (string types, limits, path syntax), so the same rules hold for
the REST API and the agent tools.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from accounts.actors import Actor
from memories.models import MemoryItem, MemoryStore, MemoryVersion
from memories.selectors.stores import MemoryPrefix


def _raw(*, required: bool = False) -> serializers.JSONField:
    return serializers.JSONField(required=required, allow_null=True)


class MemoryStoreCreateInputSerializer(serializers.Serializer):
    name = _raw(required=True)
    description = _raw()
    metadata = _raw()


class MemoryStoreUpdateInputSerializer(serializers.Serializer):
    name = _raw()
    description = _raw()
    metadata = _raw()


class MemoryWriteInputSerializer(serializers.Serializer):
    path = _raw(required=True)
    content = _raw(required=True)
    precondition = _raw()


class MemoryUpdateInputSerializer(serializers.Serializer):
    content = _raw()
    path = _raw()
    precondition = _raw()


class MemoryPutInputSerializer(serializers.Serializer):
    """Spec 001's `PUT`: the new content and the version it was read at."""

    content = _raw(required=True)
    version = _raw(required=True)


def actor_wire(actor: Actor | None) -> dict[str, Any] | None:
    """An actor as the SDK's discriminated union understands it: background
    jobs appear as `service_account_actor` (the SDK has no job actor), and an
    unattributed system write as `null`."""
    if actor is None or actor.kind == "system":
        return None
    if actor.kind == "job":
        return {"type": "service_account_actor", "service_account_id": actor.job_id}
    return actor.to_wire()


class ActorOutputSerializer(serializers.Serializer):
    """`api_actor` / `session_actor` / `user_actor` / `service_account_actor` (schema only)."""

    type = serializers.CharField()
    api_key_id = serializers.CharField(required=False)
    session_id = serializers.CharField(required=False)
    user_id = serializers.CharField(required=False)
    service_account_id = serializers.CharField(required=False)


class MemoryStoreOutputSerializer(serializers.Serializer):
    # Declared for the OpenAPI schema; `to_representation` builds the wire shape.
    type = serializers.CharField(default="memory_store")
    id = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    metadata = serializers.DictField(child=serializers.CharField())
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    archived_at = serializers.DateTimeField(allow_null=True)
    entry_count = serializers.IntegerField()
    total_size = serializers.IntegerField()

    def to_representation(self, store: MemoryStore) -> dict[str, Any]:
        field = serializers.DateTimeField()
        return {
            "type": "memory_store",
            "id": store.pk,
            "name": store.name,
            "description": store.description or "",
            "metadata": store.metadata or {},
            "created_at": field.to_representation(store.created_at),
            "updated_at": field.to_representation(store.updated_at),
            "archived_at": field.to_representation(store.archived_at) if store.archived_at else None,
            # Spec 001's statistics, from the selector's aggregate.
            "entry_count": getattr(store, "entry_count", None),
            "total_size": getattr(store, "total_size", None),
        }


class MemoryOutputSerializer(serializers.Serializer):
    """A memory (or, in lists, a `memory_prefix`); `context["view"] == "basic"`
    leaves `content` null."""

    type = serializers.ChoiceField(choices=["memory", "memory_prefix"])
    id = serializers.CharField()
    memory_store_id = serializers.CharField()
    memory_version_id = serializers.CharField()
    path = serializers.CharField()
    content = serializers.CharField(allow_null=True)
    content_sha256 = serializers.CharField()
    content_size_bytes = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    version = serializers.IntegerField()

    def to_representation(self, item: MemoryItem | MemoryPrefix) -> dict[str, Any]:
        if isinstance(item, MemoryPrefix):
            return {"type": "memory_prefix", "path": item.path}
        field = serializers.DateTimeField()
        full = self.context.get("view", "full") == "full"
        return {
            "type": "memory",
            "id": item.pk,
            "memory_store_id": item.store_id,
            "memory_version_id": item.current_version_id,
            "path": item.path,
            "content": item.content if full else None,
            "content_sha256": item.content_sha256,
            "content_size_bytes": item.content_size_bytes,
            "created_at": field.to_representation(item.created_at),
            "updated_at": field.to_representation(item.updated_at),
            # Spec 001's optimistic-concurrency counter (send it back with PUT).
            "version": item.version,
        }


class MemoryVersionOutputSerializer(serializers.Serializer):
    """A version; `context["view"] == "basic"` leaves `content` null."""

    type = serializers.CharField(default="memory_version")
    id = serializers.CharField()
    memory_id = serializers.CharField()
    memory_store_id = serializers.CharField()
    operation = serializers.ChoiceField(choices=["created", "modified", "deleted"])
    version = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    created_by = ActorOutputSerializer(allow_null=True)
    content = serializers.CharField(allow_null=True)
    content_sha256 = serializers.CharField(allow_null=True)
    content_size_bytes = serializers.IntegerField(allow_null=True)
    path = serializers.CharField(allow_null=True)
    redacted_at = serializers.DateTimeField(allow_null=True)
    redacted_by = ActorOutputSerializer(allow_null=True)

    def to_representation(self, version: MemoryVersion) -> dict[str, Any]:
        field = serializers.DateTimeField()
        full = self.context.get("view", "full") == "full"
        return {
            "type": "memory_version",
            "id": version.pk,
            "memory_id": version.memory_id,
            "memory_store_id": version.store_id,
            "operation": version.operation,
            "version": version.version,
            "created_at": field.to_representation(version.created_at),
            "created_by": actor_wire(Actor.from_fields(version, "actor")),
            "content": version.content if full else None,
            "content_sha256": version.content_sha256,
            "content_size_bytes": version.content_size_bytes,
            "path": version.path,
            "redacted_at": field.to_representation(version.redacted_at) if version.redacted_at else None,
            "redacted_by": actor_wire(Actor.from_fields(version, "redacted_by")),
        }


def memory_deleted_wire(memory_id: str) -> dict[str, str]:
    return {"id": memory_id, "type": "memory_deleted"}


def memory_store_deleted_wire(store_id: str) -> dict[str, str]:
    return {"id": store_id, "type": "memory_store_deleted"}
