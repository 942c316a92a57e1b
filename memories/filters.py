"""django-filter FilterSets for spec 003's lists (memory items, edges, item versions).

Timestamps in these query strings are integers in milliseconds since the epoch,
like every spec 003 timestamp in responses. Invalid values make the FilterSet
invalid; selectors turn that into a 400.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

import django_filters
from django import forms
from django.db.models import Q, QuerySet
from django.db.models.fields.json import KeyTransform

from conversations.selectors.conversations import user_conversation_ids
from conversations.selectors.messages import conversation_message_ids
from memories.models import (
    MAX_SCOPE_ID_CHARS,
    LifecycleStatus,
    MemoryEdge,
    MemoryItem,
    MemoryType,
    MemoryVersion,
    Relation,
    Scope,
    Status,
    SummaryTier,
    VersionOperation,
)
from memories.search import search_filter
from memories.services.item_rules import REPORTED_PENDING, STATUS_INPUTS
from memory_project.errors import ValidationError

# 9999-12-31T23:59:59.999Z: the largest instant a datetime can hold.
MAX_TIMESTAMP_MS = 253_402_300_799_999
MAX_Q_CHARS = 1000
MAX_METADATA_FILTER_CHARS = 4000
# Filters that pick few rows through an index of their own: a search combined
# with one of them is checked on those rows only (memories.search).
SELECTIVE_FILTERS = ("scope_id", "fact_key", "source_floor_id", "source_message_id", "source_job_id", "store_id")


# Query parameters every list takes besides its filters.
PAGING_PARAMS = ("limit", "offset", "format")


def check_known_params(params: Mapping[str, object], filterset_class, extra: Iterable[str] = ()) -> None:
    """An unknown query parameter is a 400, never silently ignored: a
    misspelt filter would otherwise widen the list to everything."""
    known = {*filterset_class.base_filters, *PAGING_PARAMS, *extra}
    unknown = sorted(name for name in params if name not in known)
    if unknown:
        raise ValidationError(f"{unknown[0]}: not a filter of this list (known: {', '.join(sorted(known))}).")


class MillisecondsField(forms.IntegerField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 0)
        kwargs.setdefault("max_value", MAX_TIMESTAMP_MS)
        super().__init__(*args, **kwargs)


class MillisecondsFilter(django_filters.Filter):
    """An integer ms-epoch bound on a DateTimeField."""

    field_class = MillisecondsField

    def filter(self, qs: QuerySet, value: int | None) -> QuerySet:
        if value is None:
            return qs
        moment = datetime.fromtimestamp(value / 1000, tz=UTC)
        return qs.filter(**{f"{self.field_name}__{self.lookup_expr}": moment})


def _choices(values) -> list[tuple[str, str]]:
    return [(str(value), str(value)) for value in values]


class _SortedFilterSet(django_filters.FilterSet):
    """`sort_by` + `sort_order` (spec 003's names), applied after the filters, with
    the id as tie-breaker so offset pages are stable."""

    sort_by = django_filters.ChoiceFilter(choices=_choices(["created_at"]), method="_sort_noop")
    sort_order = django_filters.ChoiceFilter(choices=_choices(["asc", "desc"]), method="_sort_noop")

    def _sort_noop(self, queryset: QuerySet, name: str, value) -> QuerySet:
        return queryset

    def filter_queryset(self, queryset: QuerySet) -> QuerySet:
        queryset = super().filter_queryset(queryset)
        field = self.form.cleaned_data.get("sort_by") or "created_at"
        prefix = "" if self.form.cleaned_data.get("sort_order") == "asc" else "-"
        return queryset.order_by(f"{prefix}{field}", f"{prefix}id")


class MemoryItemFilterSet(_SortedFilterSet):
    sort_by = django_filters.ChoiceFilter(
        choices=_choices(["created_at", "updated_at", "importance", "confidence"]), method="_sort_noop"
    )
    scope = django_filters.ChoiceFilter(choices=_choices(Scope.values))
    scope_id = django_filters.CharFilter()
    type = django_filters.ChoiceFilter(choices=_choices(MemoryType.values))
    summary_tier = django_filters.ChoiceFilter(choices=_choices(SummaryTier.values))
    status = django_filters.ChoiceFilter(choices=_choices(STATUS_INPUTS), method="filter_status")
    lifecycle_status = django_filters.ChoiceFilter(choices=_choices(LifecycleStatus.values))
    fact_key = django_filters.CharFilter(method="filter_fact_key")
    source_floor_id = django_filters.CharFilter()
    source_message_id = django_filters.CharFilter()
    source_job_id = django_filters.CharFilter(field_name="source_job_id")
    store_id = django_filters.CharFilter(field_name="store_id")
    created_from = MillisecondsFilter(field_name="created_at", lookup_expr="gte")
    created_to = MillisecondsFilter(field_name="created_at", lookup_expr="lte")
    updated_from = MillisecondsFilter(field_name="updated_at", lookup_expr="gte")
    updated_to = MillisecondsFilter(field_name="updated_at", lookup_expr="lte")
    importance_min = django_filters.NumberFilter(field_name="importance", lookup_expr="gte")
    importance_max = django_filters.NumberFilter(field_name="importance", lookup_expr="lte")
    confidence_min = django_filters.NumberFilter(field_name="confidence", lookup_expr="gte")
    confidence_max = django_filters.NumberFilter(field_name="confidence", lookup_expr="lte")
    q = django_filters.CharFilter(method="filter_q", max_length=MAX_Q_CHARS)
    user_id = django_filters.CharFilter(method="filter_user", max_length=MAX_SCOPE_ID_CHARS)
    include_conversations = django_filters.ChoiceFilter(choices=_choices(["true", "false"]), method="_sort_noop")
    conversation_id = django_filters.CharFilter(method="filter_conversation", max_length=MAX_SCOPE_ID_CHARS)
    metadata = django_filters.CharFilter(method="filter_metadata", max_length=MAX_METADATA_FILTER_CHARS)

    class Meta:
        model = MemoryItem
        fields: list[str] = []

    def filter_user(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        # The user's own scope; with `include_conversations`, also what was
        # derived from that user's conversations (their chat, branch and floor
        # memories, and any memory made from one of their messages).
        mine = Q(scope=Scope.USER, scope_id=value)
        if self.form.cleaned_data.get("include_conversations") == "true":
            workspace_id = self.request_workspace_id
            mine |= (Q(source_message_id__in=conversation_message_ids(workspace_id=workspace_id, user_id=value))
                     | Q(scope=Scope.CHAT, scope_id__in=user_conversation_ids(workspace_id=workspace_id,
                                                                             user_id=value)))
        return queryset.filter(mine)

    def filter_conversation(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        # The conversation's own scopes (chat, its branches, its floors) and
        # the memories made from its messages wherever they were filed (a
        # user-scope fact learnt in it).
        messages = conversation_message_ids(workspace_id=self.request_workspace_id, external_id=value)
        branch_prefix = json.dumps([value], ensure_ascii=False, separators=(",", ":"))[:-1] + ","
        return queryset.filter(
            Q(scope=Scope.CHAT, scope_id=value)
            | Q(scope=Scope.BRANCH, scope_id__startswith=branch_prefix)
            | Q(scope=Scope.FLOOR, scope_id__in=messages)
            | Q(source_message_id__in=messages)
        )

    def filter_metadata(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        # A JSON object: memories whose metadata holds each of its keys with
        # that value. Values are scalars: equality of a list or an object
        # would mean something different on each database.
        try:
            wanted = json.loads(value)
        except ValueError:
            wanted = None
        if not isinstance(wanted, dict) or not wanted:
            raise ValidationError('metadata: must be a non-empty JSON object, e.g. {"source":"crm"}.')
        for number, (key, expected) in enumerate(wanted.items()):
            if expected is None or isinstance(expected, (list, dict)):
                raise ValidationError(f"metadata: the value of '{key}' must be a string, a number or a boolean.")
            alias = f"metadata_{number}"
            queryset = queryset.alias(**{alias: KeyTransform(key, "metadata")}).filter(**{alias: expected})
        return queryset

    def filter_fact_key(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        # Stored keys are normalized; normalize the query the same way.
        return queryset.filter(fact_key=" ".join(value.split()).lower())

    def filter_status(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        # The reported status: a memory awaiting review is `pending`, not `active`.
        if value == REPORTED_PENDING:
            return queryset.filter(lifecycle_status=LifecycleStatus.PENDING)
        if value == Status.ACTIVE:
            return queryset.filter(status=Status.ACTIVE).exclude(lifecycle_status=LifecycleStatus.PENDING)
        return queryset.filter(status=value)

    def filter_q(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        data = self.form.cleaned_data
        selective = any(data.get(key) for key in SELECTIVE_FILTERS)
        return search_filter(queryset, value, selective_filter=selective, paged=True)

    def __init__(self, *args, workspace_id: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.request_workspace_id = workspace_id

    def filter_queryset(self, queryset: QuerySet) -> QuerySet:
        data = self.form.cleaned_data
        # Memory-store documents live in the same table; /memories shows them only
        # when asked for (scope=store or type=document).
        if not data.get("scope") and data.get("type") != MemoryType.DOCUMENT:
            queryset = queryset.exclude(scope=Scope.STORE)
        return super().filter_queryset(queryset)


class MemoryEdgeFilterSet(_SortedFilterSet):
    from_id = django_filters.CharFilter(field_name="from_item_id")
    to_id = django_filters.CharFilter(field_name="to_item_id")
    relation = django_filters.ChoiceFilter(choices=_choices(Relation.values))

    class Meta:
        model = MemoryEdge
        fields: list[str] = []


class MemoryVersionFilterSet(django_filters.FilterSet):
    operation = django_filters.ChoiceFilter(choices=_choices(VersionOperation.values))
    session_id = django_filters.CharFilter(field_name="actor_session_id")
    api_key_id = django_filters.CharFilter(field_name="actor_api_key_id")
    job_id = django_filters.CharFilter(field_name="actor_job_id")
    created_at_gte = MillisecondsFilter(field_name="created_at", lookup_expr="gte")
    created_at_lte = MillisecondsFilter(field_name="created_at", lookup_expr="lte")

    class Meta:
        model = MemoryVersion
        fields: list[str] = []
