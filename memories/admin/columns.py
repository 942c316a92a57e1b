"""Changelist columns shared by the memory and review-queue pages: each one
reads only what `get_queryset` selected, so a page costs the same queries at
any size."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db.models import IntegerField, QuerySet
from django.db.models.expressions import RawSQL
from django.db.models.functions import Substr
from django.utils.html import format_html

from memories.admin.labels import PageRefs, parse_branch_scope, short
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
            .annotate(excerpt=Substr("content", 1, EXCERPT_CHARS + 1), scope_ref=Substr("scope_id", 1, 600))
            .values_list("pk", "excerpt", "scope_ref")
        }
        for row in rows:
            row.excerpt, row.scope_ref = excerpts.get(row.pk, ("", ""))
        # Conversations and floors named by the page, in one query each.
        refs = PageRefs.for_rows(
            rows,
            message_ids=[row.source_message_id or row.source_floor_id for row in rows],
            with_text=getattr(self.model_admin, "show_source_text", False),
        )
        for row in rows:
            row.page_refs = refs
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
            # Break a long dotted key at its dots, not mid-word.
            parts = short(obj.fact_key, 48).split(".")
            key = format_html(".<wbr>".join(["{}"] * len(parts)), *parts)
            return format_html('fact<br><code class="fact-key" title="{}">{}</code>', obj.fact_key, key)
        return obj.type.replace("_", " ")

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

    @admin.display(description="created / used", ordering="created_at")
    def dates(self, obj) -> str:
        used = f"used {obj.last_used_at:%Y-%m-%d}" if obj.last_used_at else "never used"
        return format_html(
            '<span class="nowrap" title="{}">{}</span><br><span class="quiet nowrap">{}</span>',
            f"{obj.created_at:%Y-%m-%d %H:%M:%S} UTC",
            f"{obj.created_at:%Y-%m-%d %H:%M}",
            used,
        )

    @admin.display(description="imp. / conf.", ordering="importance")
    def scores(self, obj) -> str:
        return format_html(
            '<span class="score" title="importance">{}</span><br><span class="score" title="confidence">{}</span>',
            _meter(obj.importance),
            _meter(obj.confidence),
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

    @admin.display(description="source / scope")
    def source(self, obj) -> str:
        """The floor it came from (conversation and floor number, linked), the
        scope in words, and the workspace: three short lines."""
        refs = getattr(obj, "page_refs", None) or PageRefs.for_rows(
            [obj], message_ids=[obj.source_message_id or obj.source_floor_id]
        )
        lines = []
        source_id = obj.source_message_id or obj.source_floor_id
        floor = refs.floor_html(source_id)
        if floor is not None:
            lines.append(floor)
        elif source_id:
            lines.append(format_html('<span class="quiet" title="{}">source message gone</span>', source_id))
        scope_id = obj.scope_ref if hasattr(obj, "scope_ref") else obj.scope_id
        if obj.store_id:
            lines.append(format_html("store {}", short(obj.store.name if obj.store else obj.store_id)))
        elif floor is not None and obj.scope in ("chat", "branch", "floor"):
            # The floor line already names the conversation.
            parsed = parse_branch_scope(scope_id) if obj.scope == "branch" else None
            label = {"chat": "conversation scope", "floor": "floor scope"}.get(obj.scope)
            label = label or (f"branch {short(parsed[1], 20)}" if parsed else "branch scope")
            lines.append(format_html('<span class="quiet">{}</span>', label))
        else:
            lines.append(refs.scope_html(obj.scope, scope_id, obj.workspace_id))
        lines.append(format_html('<span class="quiet">{}</span>', short(obj.workspace.name, 24)))
        return format_html('<div class="source-cell">{}</div>', format_html("<br>".join(["{}"] * len(lines)), *lines))

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
