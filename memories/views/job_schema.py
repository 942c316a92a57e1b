"""OpenAPI shapes of the jobs and scope-state routes: the objects
`MemoryJobOutputSerializer` / `ScopeStateOutputSerializer` render, in spec
003's `{"data": ...}` and `{"data": [...], "meta": {...}}` envelopes."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers

from memories.models import JobKind, JobStatus, Scope
from memories.serializers.jobs import ScopeActionInputSerializer


def _ms(**kwargs) -> serializers.IntegerField:
    return serializers.IntegerField(help_text="milliseconds since the epoch", **kwargs)


def _text(**kwargs) -> serializers.CharField:
    return serializers.CharField(**kwargs)


MemoryJobObject = inline_serializer(
    name="MemoryJob",
    fields={
        "id": _text(),
        "kind": serializers.ChoiceField(choices=JobKind.choices),
        "scope": serializers.ChoiceField(choices=Scope.choices, allow_null=True),
        "scope_id": _text(allow_blank=True),
        "status": serializers.ChoiceField(choices=JobStatus.choices),
        "cancel_requested": serializers.BooleanField(),
        "attempts": serializers.IntegerField(),
        "max_attempts": serializers.IntegerField(),
        "result": serializers.DictField(help_text="counts of what the job wrote (e.g. facts, summaries)"),
        "error": _text(allow_null=True),
        "provider": _text(allow_null=True),
        "input_tokens": serializers.IntegerField(),
        "output_tokens": serializers.IntegerField(),
        "created_at": _ms(),
        "started_at": _ms(allow_null=True),
        "finished_at": _ms(allow_null=True),
        "updated_at": _ms(),
    },
)

ScopeStateObject = inline_serializer(
    name="ScopeState",
    fields={
        "scope": serializers.ChoiceField(choices=Scope.choices),
        "scope_id": _text(allow_blank=True),
        "last_processed_floor_no": serializers.IntegerField(),
        "pending_floors": serializers.IntegerField(),
        "pending_tokens": serializers.IntegerField(),
        "dirty": serializers.BooleanField(),
        "item_count": serializers.IntegerField(),
        "token_total": serializers.IntegerField(),
        "micro_count": serializers.IntegerField(),
        "last_extracted_at": _ms(allow_null=True),
        "last_compacted_at": _ms(allow_null=True),
        "created_at": _ms(),
        "updated_at": _ms(),
    },
)

OffsetMeta = inline_serializer(
    name="OffsetPageMeta",
    fields={
        "total": serializers.IntegerField(
            help_text="Exact when `total_exact`; otherwise a lower bound (counting stops 1,000 rows past the page)."
        ),
        "limit": serializers.IntegerField(),
        "offset": serializers.IntegerField(),
        "has_more": serializers.BooleanField(help_text="Rows follow this page."),
        "total_exact": serializers.BooleanField(),
    },
)

MemoryJobEnvelope = inline_serializer(name="MemoryJobEnvelope", fields={"data": MemoryJobObject})


def _page(name: str, item: serializers.Serializer) -> type[serializers.Serializer]:
    """A named `{"data": [...], "meta": {...}}` component; `many=False` stops the
    generator from documenting a list action's answer as a bare array."""
    fields = {"data": serializers.ListField(child=item), "meta": OffsetMeta}
    return extend_schema_serializer(many=False)(type(name, (serializers.Serializer,), fields))


MemoryJobPage = _page("MemoryJobPage", MemoryJobObject)
ScopeStatePage = _page("ScopeStatePage", ScopeStateObject)


def _q(name: str, kind=OpenApiTypes.STR, description: str = "", enum=None) -> OpenApiParameter:
    return OpenApiParameter(name, kind, OpenApiParameter.QUERY, required=False, description=description, enum=enum)


PAGE = [_q("limit", OpenApiTypes.INT, "1-100, default 20"), _q("offset", OpenApiTypes.INT, "default 0")]
JOB_ID = OpenApiParameter("job_id", OpenApiTypes.STR, OpenApiParameter.PATH)

JOB_SCHEMA = {
    "list": extend_schema(
        operation_id="memory_jobs_list",
        parameters=[
            _q("scope", enum=Scope.values),
            _q("scope_id"),
            _q("status", enum=JobStatus.values),
            _q("kind", enum=JobKind.values),
            *PAGE,
        ],
        responses={200: MemoryJobPage},
    ),
    "retrieve": extend_schema(operation_id="memory_jobs_retrieve", parameters=[JOB_ID], responses={200: MemoryJobEnvelope}),
    "retry": extend_schema(
        operation_id="memory_jobs_retry", parameters=[JOB_ID], request=None, responses={200: MemoryJobEnvelope}
    ),
    "cancel": extend_schema(
        operation_id="memory_jobs_cancel", parameters=[JOB_ID], request=None, responses={200: MemoryJobEnvelope}
    ),
}

SCOPE_SCHEMA = {
    "list": extend_schema(
        operation_id="memory_scopes_list",
        parameters=[_q("scope", enum=Scope.values), _q("scope_id"), _q("dirty", OpenApiTypes.BOOL), *PAGE],
        responses={200: ScopeStatePage},
    ),
    "rebuild": extend_schema(
        operation_id="memory_scopes_rebuild",
        description="Queues a job that re-derives the scope's memories from floor 1 (branch scopes only).",
        request=ScopeActionInputSerializer,
        responses={202: MemoryJobEnvelope},
    ),
    "compact": extend_schema(
        operation_id="memory_scopes_compact",
        description="Queues a job that merges the scope's micro summaries into a macro one.",
        request=ScopeActionInputSerializer,
        responses={202: MemoryJobEnvelope},
    ),
}
