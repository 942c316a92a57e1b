"""Changelist filters the stock admin lacks: numeric ranges, free-text
prefixes and ids (a store or scope can number in the thousands, so a list of
links would be its own slow query), and "due for compaction"."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.db.models import Q, QuerySet
from django.utils.translation import gettext_lazy as _

from memories.admin.job_display import job_memories_q


class InputFilter(admin.SimpleListFilter):
    """A filter rendered as a small text box; other active filters are kept as
    hidden inputs so typing here refines rather than replaces them."""

    template = "admin/memories/filters/input_filter.html"
    placeholder = ""

    def lookups(self, request, model_admin):
        # One dummy choice so the admin renders the filter at all.
        return (("", ""),)

    def choices(self, changelist):
        query = changelist.get_filters_params()
        query.pop(self.parameter_name, None)
        query.pop("p", None)
        yield {
            "hidden": [(key, value) for key, values in query.items() for value in values],
            "value": self.value() or "",
            "parameter_name": self.parameter_name,
            "placeholder": self.placeholder,
            "clear_url": changelist.get_query_string(remove=[self.parameter_name]),
        }


class PathPrefixFilter(InputFilter):
    title = _("path prefix")
    parameter_name = "path_prefix"
    placeholder = "/notes/"

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if not value:
            return queryset
        return queryset.filter(path__startswith=value)


class StoreIdFilter(InputFilter):
    title = _("memory store id")
    parameter_name = "store_id"
    placeholder = "memstore_…"

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        value = (self.value() or "").strip()
        return queryset.filter(store_id=value) if value else queryset


class ScopeIdFilter(InputFilter):
    title = _("scope id")
    parameter_name = "scope_id"
    placeholder = "conversation, branch or store id"

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        value = self.value()
        return queryset.filter(scope_id=value) if value else queryset


class JobFilter(InputFilter):
    """Memories a job created or changed (linked from the job's page)."""

    title = _("written by job")
    parameter_name = "job"
    placeholder = "job_…"

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        value = (self.value() or "").strip()
        return queryset.filter(job_memories_q(value)) if value else queryset


class RangeFilter(admin.SimpleListFilter):
    """Buckets as links plus a min / max box, over a float field in [0, 1]."""

    template = "admin/memories/filters/range_filter.html"
    field_name = ""
    buckets: tuple[tuple[str, float | None, float | None], ...] = (
        ("< 0.3", None, 0.3),
        ("0.3 – 0.7", 0.3, 0.7),
        ("≥ 0.7", 0.7, None),
    )

    def __init__(self, request, params, model, model_admin):
        self.parameter_name = f"{self.field_name}__range"
        self.gte_param = f"{self.field_name}__gte"
        self.lt_param = f"{self.field_name}__lt"
        self.bounds: dict[str, float] = {}
        for name in (self.gte_param, self.lt_param):
            raw = params.pop(name, None)
            if raw is None:
                continue
            raw = raw[-1] if isinstance(raw, list) else raw
            if raw == "":
                continue
            try:
                self.bounds[name] = float(raw)
            except ValueError as exc:
                raise IncorrectLookupParameters(exc) from exc
        super().__init__(request, params, model, model_admin)

    def lookups(self, request, model_admin):
        return [(label, label) for label, _low, _high in self.buckets]

    def has_output(self) -> bool:
        return True

    def expected_parameters(self):
        return [self.gte_param, self.lt_param]

    def value(self):
        return self.bounds or None

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        if self.gte_param in self.bounds:
            queryset = queryset.filter(**{self.gte_param: self.bounds[self.gte_param]})
        if self.lt_param in self.bounds:
            queryset = queryset.filter(**{self.lt_param: self.bounds[self.lt_param]})
        return queryset

    def _fmt(self, value: float | None) -> str:
        return "" if value is None else f"{value:g}"

    def choices(self, changelist):
        remove = [self.gte_param, self.lt_param]
        yield {
            "selected": not self.bounds,
            "query_string": changelist.get_query_string(remove=remove),
            "display": _("All"),
        }
        for label, low, high in self.buckets:
            new = {}
            if low is not None:
                new[self.gte_param] = self._fmt(low)
            if high is not None:
                new[self.lt_param] = self._fmt(high)
            selected = self.bounds.get(self.gte_param) == low and self.bounds.get(self.lt_param) == high
            yield {
                "selected": selected,
                "query_string": changelist.get_query_string(new, [p for p in remove if p not in new]),
                "display": label,
            }
        query = changelist.get_filters_params()
        for name in remove + ["p"]:
            query.pop(name, None)
        yield {
            "form": True,
            "hidden": [(key, value) for key, values in query.items() for value in values],
            "gte_param": self.gte_param,
            "lt_param": self.lt_param,
            "gte": self._fmt(self.bounds.get(self.gte_param)),
            "lt": self._fmt(self.bounds.get(self.lt_param)),
        }


class ImportanceFilter(RangeFilter):
    title = _("importance")
    field_name = "importance"


class ConfidenceFilter(RangeFilter):
    title = _("confidence")
    field_name = "confidence"


class ReportedStatusFilter(admin.SimpleListFilter):
    """The compat status as the API reports it: a memory awaiting review is
    `pending`, never `active` (item_rules.reported_status)."""

    title = _("status")
    parameter_name = "status__exact"

    def lookups(self, request, model_admin):
        return (("active", _("active")), ("deprecated", _("deprecated")), ("pending", _("pending (awaiting review)")))

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == "pending":
            return queryset.filter(lifecycle_status="pending")
        if value == "active":
            return queryset.filter(status="active").exclude(lifecycle_status="pending")
        if value == "deprecated":
            return queryset.filter(status="deprecated")
        return queryset


class NeedsReviewFilter(admin.SimpleListFilter):
    """Pending memories in workspaces that require review: the review queue."""

    title = _("review")
    parameter_name = "review"

    def lookups(self, request, model_admin):
        return (("pending", _("Awaiting review")),)

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        if self.value() == "pending":
            return queryset.filter(lifecycle_status="pending", workspace__requires_review=True)
        return queryset


class LastUsedFilter(admin.SimpleListFilter):
    title = _("last used")
    parameter_name = "used"

    def lookups(self, request, model_admin):
        return (("never", _("Never used")), ("used", _("Used")))

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        if self.value() == "never":
            return queryset.filter(last_used_at__isnull=True)
        if self.value() == "used":
            return queryset.filter(last_used_at__isnull=False)
        return queryset


def compaction_due_q() -> Q:
    """Scopes whose micro summaries have piled up past the compaction threshold."""
    return Q(micro_count__gte=settings.MEMORY_COMPACT_MIN_MICROS)


class CompactionDueFilter(admin.SimpleListFilter):
    title = _("compaction")
    parameter_name = "compaction"

    def lookups(self, request, model_admin):
        return (("due", _("Due for compaction")), ("not_due", _("Not due")))

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        if self.value() == "due":
            return queryset.filter(compaction_due_q())
        if self.value() == "not_due":
            return queryset.exclude(compaction_due_q())
        return queryset


class BacklogFilter(admin.SimpleListFilter):
    title = _("backlog")
    parameter_name = "backlog"

    def lookups(self, request, model_admin):
        return (("pending", _("Floors waiting")), ("caught_up", _("Caught up")))

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        # The changelist's queryset is annotated with the derived pending work.
        if self.value() == "pending":
            return queryset.filter(pending_floors__gt=0)
        if self.value() == "caught_up":
            return queryset.filter(pending_floors=0)
        return queryset


__all__ = [
    "BacklogFilter",
    "CompactionDueFilter",
    "ConfidenceFilter",
    "ImportanceFilter",
    "LastUsedFilter",
    "NeedsReviewFilter",
    "PathPrefixFilter",
    "ReportedStatusFilter",
    "ScopeIdFilter",
    "StoreIdFilter",
]
