"""Changelist columns shared by the memory and review-queue pages: each one
reads only what `get_queryset` selected, so a page costs the same queries at
any size."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.utils import quote
from django.contrib.admin.views.main import ChangeList
from django.db.models import IntegerField, QuerySet
from django.db.models.expressions import RawSQL
from django.db.models.functions import Substr
from django.urls import reverse
from django.utils.html import format_html

from memories.search import search_filter

EXCERPT_CHARS = 140
# Heavy columns a changelist never needs whole.
DEFERRED_COLUMNS = ("content", "scope_id")


# The same text as the index `mem_admin_review_order` (migration 0005): the
# planners match an expression index by its text, so this is raw SQL with
# literals rather than a Case() with bound parameters.
REVIEW_RANK_SQL = "CASE lifecycle_status WHEN 'pending' THEN 0 WHEN 'active' THEN 1 ELSE 2 END"


def review_rank() -> RawSQL:
    """Pending first (they block injection), then active, then the rest."""
    return RawSQL(REVIEW_RANK_SQL, [], output_field=IntegerField())  # noqa: S611 - a constant, no input


def changelist_queryset(queryset: QuerySet) -> QuerySet:
    return queryset.select_related("workspace", "store").defer(*DEFERRED_COLUMNS, "workspace__slug")


class MemoryChangeList(ChangeList):
    """Reads the excerpts of the shown page in one query of their own.

    Selecting `SUBSTR(content)` in the page query would make the database
    compute it (detoasting up to 100 kB) for every row it sorts, not just the
    50 it returns: 1.5 s instead of a few milliseconds over 100,000 memories.
    """

    def get_results(self, request):
        super().get_results(request)
        rows = list(self.result_list)
        excerpts = {
            pk: (excerpt, scope_ref)
            for pk, excerpt, scope_ref in self.model._default_manager.filter(pk__in=[row.pk for row in rows])
            .annotate(excerpt=Substr("content", 1, EXCERPT_CHARS + 1), scope_ref=Substr("scope_id", 1, 80))
            .values_list("pk", "excerpt", "scope_ref")
        }
        for row in rows:
            row.excerpt, row.scope_ref = excerpts.get(row.pk, ("", ""))
        self.result_list = rows


def search_memories(queryset: QuerySet, term: str) -> QuerySet:
    """Substring search over content and fact key (any language, through the
    search index), or an exact memory id."""
    term = term.strip()
    if not term:
        return queryset
    if term.startswith("mem_") and " " not in term:
        return queryset.filter(pk=term)
    return search_filter(queryset, term)


class MemoryColumns:
    """Column methods for a ModelAdmin over MemoryItem."""

    @admin.display(description="id", ordering="id")
    def short_id(self, obj) -> str:
        return obj.pk

    @admin.display(description="type", ordering="type")
    def kind(self, obj) -> str:
        if obj.type == "summary" and obj.summary_tier:
            return f"summary · {obj.summary_tier}"
        if obj.type == "fact" and obj.fact_key:
            return format_html("fact<br><code>{}</code>", obj.fact_key[:60])
        return obj.type

    @admin.display(description="content")
    def excerpt_col(self, obj) -> str:
        text = getattr(obj, "excerpt", None)
        if text is None:
            text = obj.content or ""
        more = "…" if len(text) > EXCERPT_CHARS else ""
        prefix = format_html("<code>{}</code><br>", obj.path) if obj.path else ""
        return format_html(
            '{}<span class="memory-excerpt" title="{}">{}{}</span>', prefix, obj.pk, text[:EXCERPT_CHARS] or "(empty)", more
        )

    @admin.display(description="created / last used", ordering="created_at")
    def dates(self, obj) -> str:
        used = obj.last_used_at.strftime("%Y-%m-%d %H:%M") if obj.last_used_at else "never used"
        return format_html(
            '<span class="nowrap">{}</span><br><span class="quiet nowrap">{}</span>',
            obj.created_at.strftime("%Y-%m-%d %H:%M"),
            used,
        )

    @admin.display(description="importance", ordering="importance")
    def importance_col(self, obj) -> str:
        return _meter(obj.importance)

    @admin.display(description="confidence", ordering="confidence")
    def confidence_col(self, obj) -> str:
        return _meter(obj.confidence)

    @admin.display(description="status", ordering="lifecycle_status")
    def state(self, obj) -> str:
        label = obj.lifecycle_status
        if obj.status != obj.lifecycle_status and obj.status == "deprecated":
            label = f"{label} / deprecated"
        return format_html('<span class="memory-state memory-state-{}">{}</span>', obj.lifecycle_status, label)

    @admin.display(description="source")
    def source(self, obj) -> str:
        parts = []
        if obj.store_id:
            parts.append(format_html("store {}", obj.store.name if obj.store else obj.store_id))
        if obj.source_message_id or obj.source_floor_id:
            url = reverse("admin:memories_memoryitem_source", args=[quote(obj.pk)])
            parts.append(format_html('<a href="{}">floor {}</a>', url, obj.source_message_id or obj.source_floor_id))
        if obj.source_job_id:
            url = reverse("admin:memories_memoryjob_change", args=[quote(obj.source_job_id)])
            parts.append(format_html('<a href="{}">job</a>', url))
        scope = obj.scope
        ref = getattr(obj, "scope_ref", "")
        if ref and scope not in ("global", "store"):
            scope = f"{scope}: {ref}"
        parts.append(format_html('<span class="quiet">{}</span>', scope))
        return format_html("{}", format_html("<br>".join(["{}"] * len(parts)), *parts))

    @admin.display(description="workspace", ordering="workspace__name")
    def workspace_col(self, obj) -> str:
        return obj.workspace.name


def _meter(value: float) -> str:
    percent = max(0, min(100, round(value * 100)))
    level = "low" if value < 0.3 else "mid" if value < 0.7 else "high"
    return format_html(
        '<span class="meter meter-{}" title="{}"><span style="width:{}%"></span></span> {}',
        level,
        f"{value:.2f}",
        percent,
        f"{value:.2f}",
    )
