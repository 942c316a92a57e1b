"""Reads of memory jobs and scope states, scoped to one workspace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import django_filters
from django.db.models import QuerySet

from memories.models import MAX_SCOPE_ID_CHARS, JobKind, JobStatus, MemoryJob, Scope, ScopeState
from memories.selectors.items import filterset_errors
from memory_project.errors import NotFoundError, ValidationError


def _choices(values) -> list[tuple[str, str]]:
    return [(str(v), str(v)) for v in values]


class MemoryJobFilterSet(django_filters.FilterSet):
    scope = django_filters.ChoiceFilter(choices=_choices(Scope.values))
    scope_id = django_filters.CharFilter(max_length=MAX_SCOPE_ID_CHARS)
    status = django_filters.ChoiceFilter(choices=_choices(JobStatus.values))
    kind = django_filters.ChoiceFilter(choices=_choices(JobKind.values))

    class Meta:
        model = MemoryJob
        fields = ["scope", "scope_id", "status", "kind"]


class ScopeStateFilterSet(django_filters.FilterSet):
    """Filters a queryset annotated by `ScopeState.objects.with_pending()`."""

    scope = django_filters.ChoiceFilter(choices=_choices(Scope.values))
    scope_id = django_filters.CharFilter(max_length=MAX_SCOPE_ID_CHARS)
    # Strict: a present value that is not a boolean is a 400 (django-filter's
    # BooleanFilter reads anything else as "no filter").
    dirty = django_filters.TypedChoiceFilter(
        field_name="dirty", choices=[("true", "true"), ("false", "false")], coerce=lambda value: value == "true"
    )

    class Meta:
        model = ScopeState
        fields = ["scope", "scope_id"]


def _refuse_empty(filters: Mapping[str, Any] | None, filterset_class) -> None:
    """A filter given with no value (`?kind=`) is a mistake, not "no filter":
    django-filter would ignore it and answer everything."""
    empty = sorted(name for name in (filters or {}) if name in filterset_class.base_filters
                   and (filters or {}).get(name) == "")
    if empty:
        raise ValidationError(f"{empty[0]}: must not be empty.")


def memory_job_list(*, workspace, filters: Mapping[str, Any] | None = None) -> QuerySet[MemoryJob]:
    """Newest first; ValidationError for bad filter values."""
    _refuse_empty(filters, MemoryJobFilterSet)
    filterset = MemoryJobFilterSet(data=filters or {}, queryset=MemoryJob.objects.filter(workspace=workspace))
    if not filterset.is_valid():
        raise filterset_errors(filterset)
    return filterset.qs.order_by("-created_at", "-pk").defer("payload")


def memory_job_get(*, workspace, job_id: str) -> MemoryJob:
    job = MemoryJob.objects.filter(workspace=workspace, pk=job_id).first()
    if job is None:
        raise NotFoundError(f"No memory job '{job_id}'.")
    return job


def scope_state_list(*, workspace, filters: Mapping[str, Any] | None = None) -> QuerySet[ScopeState]:
    """Most recently active first."""
    _refuse_empty(filters, ScopeStateFilterSet)
    filterset = ScopeStateFilterSet(
        data=filters or {}, queryset=ScopeState.objects.filter(workspace=workspace).with_pending()
    )
    if not filterset.is_valid():
        raise filterset_errors(filterset)
    return filterset.qs.order_by("-updated_at", "-pk").defer("rolling_summary")
