"""Wire shapes of memory jobs and scope states (spec 003: integer ms timestamps)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from memories.models import MAX_SCOPE_ID_CHARS, MemoryJob, Scope, ScopeState
from memories.serializers.items import StrictInputSerializer, to_ms
from memory_project.fields import StrictCharField


class MemoryJobOutputSerializer(serializers.Serializer):
    def to_representation(self, job: MemoryJob) -> dict[str, Any]:
        return {
            "id": job.pk,
            "kind": job.kind,
            "scope": job.scope,
            "scope_id": job.scope_id,
            "status": job.status,
            "cancel_requested": job.cancel_requested,
            "attempts": job.attempts,
            "max_attempts": job.max_attempts,
            "result": job.result or {},
            "error": job.error or None,
            "provider": job.provider or None,
            "input_tokens": job.input_tokens,
            "output_tokens": job.output_tokens,
            "created_at": to_ms(job.created_at),
            "started_at": to_ms(job.started_at),
            "finished_at": to_ms(job.finished_at),
            "updated_at": to_ms(job.updated_at),
        }


class ScopeStateOutputSerializer(serializers.Serializer):
    def to_representation(self, state: ScopeState) -> dict[str, Any]:
        return {
            "scope": state.scope,
            "scope_id": state.scope_id,
            "last_processed_floor_no": state.last_processed_floor_no,
            "pending_floors": state.pending_floors,
            "pending_tokens": state.pending_tokens,
            "dirty": state.dirty,
            "item_count": state.item_count,
            "token_total": state.token_total,
            "micro_count": state.micro_count,
            "last_extracted_at": to_ms(state.last_extracted_at),
            "last_compacted_at": to_ms(state.last_compacted_at),
            "created_at": to_ms(state.created_at),
            "updated_at": to_ms(state.updated_at),
        }


class ScopeActionInputSerializer(StrictInputSerializer):
    scope = serializers.ChoiceField(choices=[s for s in Scope.values if s != Scope.STORE])
    scope_id = StrictCharField(max_length=MAX_SCOPE_ID_CHARS, allow_blank=True, trim_whitespace=False)
