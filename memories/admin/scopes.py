"""Per-scope state of the pipeline: how far each scope's extraction got, what
waits, what it holds; rebuild / compact scopes. Five columns that fit a
1280 px screen beside the filters: a scope is one cell (its conversation and
workspace under it), and the counters are grouped by what they answer."""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from accounts.admin_scope import WorkspaceScopedAdmin
from conversations.selectors.branches import branch_pending_annotations
from memories.admin.filters import BacklogFilter, CompactionDueFilter, ScopeIdFilter, compaction_due_q
from memories.admin.jobs import MachineWrittenAdmin, scope_memories_url
from memories.admin.labels import scope_label_html, scope_text, short
from memories.admin.outcomes import Outcome, confirmation_page
from memories.models import ScopeState
from memories.services.scopes import scope_compact_request, scope_rebuild_request


def _moment(value) -> str:
    return f"{value:%Y-%m-%d %H:%M}" if value else "never"


@admin.register(ScopeState)
class ScopeStateAdmin(WorkspaceScopedAdmin, MachineWrittenAdmin):
    list_display = ["scope_col", "backlog", "processed", "holds", "activity"]
    list_display_links = None
    list_filter = [CompactionDueFilter, BacklogFilter, "scope", "workspace", ScopeIdFilter]
    search_fields = ["scope_id", "conversation__external_id"]
    search_help_text = "A scope id or a conversation id."
    list_select_related = ["workspace", "conversation"]
    list_per_page = 100
    show_full_result_count = False
    actions = ["compact_scopes", "rebuild_scopes"]
    # Most pending work first: derived from the branch counters, so an
    # expression rather than a column name.
    ordering = [branch_pending_annotations("branch__")["pending_floors"].desc(), "-micro_count"]
    readonly_fields = [field.name for field in ScopeState._meta.fields] + [
        "pending_floors_col",
        "pending_tokens_col",
        "memories_link",
        "compaction_due",
    ]

    def get_queryset(self, request):
        return super().get_queryset(request).with_pending()

    def changelist_view(self, request, extra_context=None):
        # Django's "Select scope state to change" says nothing of what the list is.
        title = "Scope states: how far the pipeline got in each scope"
        return super().changelist_view(request, {"title": title, **(extra_context or {})})

    @admin.display(description="scope", ordering="scope_id")
    def scope_col(self, obj) -> str:
        """The scope in words (linked to its state's page), then its memories,
        its conversation's page and the workspace on a quiet second line."""
        text = scope_text(obj.scope, obj.scope_id)
        page = reverse("admin:memories_scopestate_change", args=[obj.pk])
        links = [format_html('<a href="{}">memories</a>', scope_memories_url(obj.scope, obj.scope_id))]
        if obj.conversation_id is not None:
            url = reverse("admin:conversations_conversation_change", args=[obj.conversation_id])
            links.append(format_html('<a href="{}" title="{}">conversation</a>', url, obj.conversation.external_id))
        links.append(format_html("{}", short(obj.workspace.name, 32)))
        return format_html(
            '<a class="scope-label" href="{}" title="{}">{}</a><br><span class="quiet">{}</span>',
            page, text, scope_label_html(obj.scope, obj.scope_id), format_html(" · ".join(["{}"] * len(links)), *links),
        )

    @admin.display(description="waiting", ordering="pending_floors")
    def backlog(self, obj) -> str:
        dirty = format_html(' <span class="job-state job-state-pending" title="{}">dirty</span>',
                            "marked for re-extraction") if obj.dirty else ""
        if not obj.pending_floors:
            return format_html('<span class="quiet">caught up</span>{}', dirty)
        return format_html('<span class="nowrap">{} floor{}</span><br><span class="quiet nowrap">{} tokens</span>{}',
                           obj.pending_floors, "" if obj.pending_floors == 1 else "s", f"{obj.pending_tokens:,}", dirty)

    @admin.display(description="processed", ordering="last_processed_floor_no")
    def processed(self, obj) -> str:
        if not obj.last_processed_floor_no:
            return format_html('<span class="quiet">{}</span>', "nothing yet")
        return format_html('<span class="nowrap">up to floor {}</span>', obj.last_processed_floor_no)

    @admin.display(description="memories", ordering="item_count")
    def holds(self, obj) -> str:
        return format_html(
            '<span class="nowrap">{} item{}</span><br><span class="quiet nowrap">{} micro · {} tokens</span>',
            obj.item_count, "" if obj.item_count == 1 else "s", obj.micro_count, f"{obj.token_total:,}",
        )

    @admin.display(description="extracted / compacted", ordering="last_extracted_at")
    def activity(self, obj) -> str:
        return format_html(
            '<span class="nowrap" title="last extraction">{}</span><br>'
            '<span class="quiet nowrap" title="last compaction">{}</span>',
            _moment(obj.last_extracted_at), f"compacted {_moment(obj.last_compacted_at)}",
        )

    @admin.display(description="pending floors", ordering="pending_floors")
    def pending_floors_col(self, obj) -> int:
        return obj.pending_floors

    @admin.display(description="pending tokens", ordering="pending_tokens")
    def pending_tokens_col(self, obj) -> int:
        return obj.pending_tokens

    @admin.display(description="memories")
    def memories_link(self, obj) -> str:
        return format_html('<a href="{}">memories of this scope</a>', scope_memories_url(obj.scope, obj.scope_id))

    @admin.display(description="due for compaction", boolean=True)
    def compaction_due(self, obj) -> bool:
        return ScopeState.objects.filter(pk=obj.pk).filter(compaction_due_q()).exists()

    def _request_jobs(self, request, queryset, verb: str, call) -> None:
        outcome = Outcome(verb)
        for state in queryset.select_related("workspace"):
            outcome.attempt(call, workspace=state.workspace, scope=state.scope, scope_id=state.scope_id)
        outcome.report(self, request)

    @admin.action(description="Compact selected scopes now", permissions=["change"])
    def compact_scopes(self, request, queryset):
        self._request_jobs(request, queryset, "Queue compaction", scope_compact_request)

    @admin.action(description="Rebuild selected scopes from their messages…", permissions=["change"])
    def rebuild_scopes(self, request, queryset):
        if request.POST.get("post") != "yes":
            rows = [(s.scope, s.scope_id, s.workspace.name, s.item_count) for s in queryset.select_related("workspace")]
            return confirmation_page(
                self,
                request,
                queryset,
                action="rebuild_scopes",
                title="Rebuild scopes",
                question=(
                    "Re-derive these scopes' summaries, facts and open loops from floor 1? The pipeline replaces "
                    "what it derived before; only branch scopes can be rebuilt."
                ),
                rows=rows,
                extra={"columns": ["scope", "scope id", "workspace", "memories now"], "confirm_label": "Yes, rebuild"},
            )
        self._request_jobs(request, queryset, "Queue rebuild", scope_rebuild_request)
        return None
