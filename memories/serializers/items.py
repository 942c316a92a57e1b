"""Wire shapes of spec 003's memory items, edges and item versions.

Timestamps are integers (milliseconds since the epoch), as spec 003 says.
Input serializers check the body is an object with known keys and pass raw
values on: the services own the rules (types, ranges, normalization), so the
REST API, the admin and the pipeline get the same answers.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rest_framework import serializers

from accounts.actors import Actor
from memories.models import MemoryEdge, MemoryItem, MemoryVersion
from memories.services.item_rules import reported_status
from memory_project.fields import StrictCharField


def to_ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


def _raw(*, required: bool = False, help_text: str | None = None) -> serializers.JSONField:
    return serializers.JSONField(required=required, allow_null=True, help_text=help_text)


STATUS_HELP = (
    "active | deprecated | pending. A memory awaiting review (workspaces that require review) reports "
    "`pending`, never `active`; sending `pending` puts a memory (back) in review. Approving one (to "
    "`active`) is reserved to operators: through the API it is a 409."
)

DUE_DATE_HELP = "open loops: the day the task is due, YYYY-MM-DD, or null (other types: always null)"
METADATA_HELP = (
    "your own JSON object (a source, categories, an id of yours): kept, returned and filtered on "
    "(`?metadata={...}` on the list), never read by the service. At most 64 keys and 16 KB; an update "
    "replaces the whole object; null means {}."
)


class StrictInputSerializer(serializers.Serializer):
    """Refuses keys it does not declare, so a misspelt field is a 400 rather than
    a silent no-op."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({unknown[0]: ["Unknown field."]})
        return super().to_internal_value(data)


class MemoryItemCreateInputSerializer(StrictInputSerializer):
    scope = _raw(required=True)
    scope_id = _raw()
    type = _raw(required=True)
    summary_tier = _raw()
    content = _raw(required=True)
    fact_key = _raw()
    importance = _raw()
    confidence = _raw()
    source_floor_id = _raw()
    source_message_id = _raw()
    sources = _raw()
    status = _raw(help_text=STATUS_HELP)
    lifecycle_status = _raw()
    due_date = _raw(help_text=DUE_DATE_HELP)
    metadata = _raw(help_text=METADATA_HELP)


class MemoryItemUpdateInputSerializer(StrictInputSerializer):
    scope = _raw()
    scope_id = _raw()
    type = _raw()
    summary_tier = _raw()
    content = _raw()
    fact_key = _raw()
    importance = _raw()
    confidence = _raw()
    source_floor_id = _raw()
    source_message_id = _raw()
    sources = _raw()
    status = _raw(help_text=STATUS_HELP)
    lifecycle_status = _raw()
    due_date = _raw(help_text=DUE_DATE_HELP)
    metadata = _raw(help_text=METADATA_HELP)
    # Optimistic concurrency (409 `memory_precondition_failed` when stale).
    expected_version = _raw()
    expected_content_sha256 = _raw()


class MemoryBatchStatusInputSerializer(StrictInputSerializer):
    ids = _raw(required=True)
    status = _raw(required=True, help_text=STATUS_HELP)


class MemoryBatchDeleteInputSerializer(StrictInputSerializer):
    ids = _raw(required=True)


class MemoryRestoreInputSerializer(StrictInputSerializer):
    version_id = StrictCharField(max_length=40)


class MemoryEdgeCreateInputSerializer(StrictInputSerializer):
    from_id = StrictCharField(max_length=40)
    to_id = StrictCharField(max_length=40)
    relation = _raw(required=True)


class MemoryEdgeUpdateInputSerializer(StrictInputSerializer):
    relation = _raw(required=True)


class MemoryItemOutputSerializer(serializers.Serializer):
    def to_representation(self, item: MemoryItem) -> dict[str, Any]:
        return {
            "id": item.pk,
            "scope": item.scope,
            "scope_id": item.scope_id,
            "type": item.type,
            "summary_tier": item.summary_tier,
            "content": item.content,
            "fact_key": item.fact_key,
            "importance": item.importance,
            "confidence": item.confidence,
            "source_floor_id": item.source_floor_id,
            "source_message_id": item.source_message_id,
            "due_date": item.due_date.isoformat() if item.due_date else None,
            "metadata": item.metadata or {},
            # `pending` while awaiting review (item_rules.reported_status).
            "status": reported_status(item.status, item.lifecycle_status),
            "lifecycle_status": item.lifecycle_status,
            "source_job_id": item.source_job_id,
            "token_count_estimate": item.token_count_estimate,
            "last_used_at": to_ms(item.last_used_at),
            "coverage_start_floor_no": item.coverage_start_floor_no,
            "coverage_end_floor_no": item.coverage_end_floor_no,
            "derived_from_count": item.derived_from_count,
            # Exact provenance: every message id the memory was made from (and
            # the memory ids a macro summary compacts).
            "sources": list(item.sources or []),
            "source_memory_ids": list(item.source_memory_ids or []),
            "created_at": to_ms(item.created_at),
            "updated_at": to_ms(item.updated_at),
            # Extensions: optimistic concurrency and the store document fields.
            "version": item.version,
            "content_sha256": item.content_sha256,
            "store_id": item.store_id,
            "path": item.path,
        }


class MemoryEdgeOutputSerializer(serializers.Serializer):
    def to_representation(self, edge: MemoryEdge) -> dict[str, Any]:
        return {
            "id": edge.pk,
            "from_id": edge.from_item_id,
            "to_id": edge.to_item_id,
            "relation": edge.relation,
            "created_at": to_ms(edge.created_at),
        }


class MemoryItemVersionOutputSerializer(serializers.Serializer):
    """A version of an item; redacted ones keep operation, actor and times only."""

    def to_representation(self, version: MemoryVersion) -> dict[str, Any]:
        actor = Actor.from_fields(version, "actor")
        redactor = Actor.from_fields(version, "redacted_by")
        return {
            "id": version.pk,
            "memory_id": version.memory_id,
            "version": version.version,
            "operation": version.operation,
            "content": version.content,
            "content_sha256": version.content_sha256,
            "content_size_bytes": version.content_size_bytes,
            "path": version.path,
            "attributes": version.attributes,
            "created_by": actor.to_wire() if actor else None,
            "created_at": to_ms(version.created_at),
            "redacted": version.redacted_at is not None,
            "redacted_at": to_ms(version.redacted_at),
            "redacted_by": redactor.to_wire() if redactor else None,
        }
