"""Background jobs and per-scope state: readable lists, full errors, links to
the scope's memories; retry / cancel jobs, rebuild / compact scopes."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from accounts.admin_scope import WorkspaceScopedAdmin
from conversations.selectors.branches import branch_pending_annotations
from memories.admin.filters import BacklogFilter, CompactionDueFilter, ScopeIdFilter, compaction_due_q
from memories.admin.job_display import job_memories, result_parts, result_summary, took, when
from memories.admin.labels import scope_text, short
from memories.admin.outcomes import Outcome, confirmation_page
from memories.models import MemoryJob, ScopeState
from memories.services.jobs import memory_job_cancel, memory_job_retry
from memories.services.scopes import scope_compact_request, scope_rebuild_request

ERROR_PREVIEW_CHARS = 90


def scope_memories_url(scope: str | None, scope_id: str) -> str:
    query = {"scope__exact": scope or "", "scope_id": scope_id}
    return f"{reverse('admin:memories_memoryitem_changelist')}?{urlencode(query)}"


def scope_link(scope: str | None, scope_id: str) -> str:
    if not scope:
        return "—"
    label = short(scope_text(scope, scope_id), 48)
    return format_html(
        '<a href="{}" title="memories of {}">{}</a>', scope_memories_url(scope, scope_id), scope_text(scope, scope_id), label
    )


class MachineWrittenAdmin(admin.ModelAdmin):
    """Rows the pipeline writes: never added or deleted here, and their pages
    are read-only. The change permission still gates the changelist's actions
    (retry / cancel a job, rebuild / compact a scope)."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return obj is None and super().has_change_permission(request)


@admin.register(MemoryJob)
class MemoryJobAdmin(WorkspaceScopedAdmin, MachineWrittenAdmin):
    # Narrow columns that fit 1280 px: the workspace is the scope's second
    # line, and one "outcome" column says what a job did or why it failed.
    list_display = [
        "id_col",
        "kind",
        "status_col",
        "scope_col",
        "attempts",
        "tokens",
        "outcome",
        "created_col",
    ]
    list_filter = ["status", "kind", "scope", "cancel_requested", "provider", "workspace"]
    search_fields = ["=id", "scope_id", "error"]
    search_help_text = "A job id (exact), a scope id or text of the error."
    list_select_related = ["workspace"]
    list_per_page = 100
    show_full_result_count = False
    date_hierarchy = "created_at"
    actions = ["retry_jobs", "cancel_jobs"]
    fields = [
        "id",
        "workspace",
        "kind",
        "status",
        "error_display",
        "cancel_requested",
        "scope_col",
        "result_display",
        "memories_display",
        "attempts",
        "max_attempts",
        "provider",
        "input_tokens",
        "output_tokens",
        "created_display",
        "started_display",
        "finished_display",
        "updated_display",
        "payload_display",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        match = getattr(request, "resolver_match", None)
        if match is not None and (match.url_name or "").endswith("_changelist"):
            # Payloads are never shown in the list (results are, in words).
            queryset = queryset.defer("payload")
        return queryset

    @admin.display(description="scope", ordering="scope")
    def scope_col(self, obj) -> str:
        workspace = obj.workspace.name if obj.workspace_id else "all workspaces"
        return format_html('{}<br><span class="quiet">{}</span>', scope_link(obj.scope, obj.scope_id), workspace)

    list_display_links = ["id_col"]

    def changelist_view(self, request, extra_context=None):
        return super().changelist_view(request, {"title": "Memory jobs", **(extra_context or {})})

    @admin.display(description="id", ordering="id")
    def id_col(self, obj) -> str:
        # The tail tells jobs apart; the whole id is the tooltip and the page's title.
        return format_html('<span class="nowrap" title="{}">…{}</span>', obj.pk, obj.pk[-8:])

    @admin.display(description="status", ordering="status")
    def status_col(self, obj) -> str:
        return format_html('<span class="job-state job-state-{}">{}</span>', obj.status, obj.status)

    @admin.display(description="outcome")
    def outcome(self, obj) -> str:
        if obj.error:
            return self.error_preview(obj)
        if obj.status == "succeeded":
            return format_html('<span class="job-result">{}</span>', result_summary(obj.result))
        return ""

    @admin.display(description="created / took", ordering="created_at")
    def created_col(self, obj) -> str:
        return format_html(
            '<span class="nowrap">{}</span><br><span class="quiet">{}</span>',
            f"{obj.created_at:%Y-%m-%d %H:%M:%S}",
            took(obj) or obj.status,
        )

    @admin.display(description="created")
    def created_display(self, obj) -> str:
        return when(obj.created_at)

    @admin.display(description="started")
    def started_display(self, obj) -> str:
        return when(obj.started_at)

    @admin.display(description="finished")
    def finished_display(self, obj) -> str:
        spent = took(obj)
        return f"{when(obj.finished_at)} (took {spent})" if spent else when(obj.finished_at)

    @admin.display(description="updated")
    def updated_display(self, obj) -> str:
        return when(obj.updated_at)

    @admin.display(description="memories written")
    def memories_display(self, obj) -> str:
        rows, total, url = job_memories(obj)
        if not total:
            return "—"
        items = format_html_join(
            "",
            '<li><a href="{}">{}</a> <span class="quiet">{} · {}</span> {}</li>',
            (
                (row.url, row.item.type.replace("_", " "), row.how, row.item.lifecycle_status, short(row.item.content, 90))
                for row in rows
            ),
        )
        more = f"all {total} in the memories list" if total > len(rows) else "these in the memories list"
        return format_html('<ul class="job-memories">{}</ul><a href="{}">{}</a>', items, url, more)

    @admin.display(description="tokens in / out")
    def tokens(self, obj) -> str:
        return f"{obj.input_tokens} / {obj.output_tokens}"

    @admin.display(description="error")
    def error_preview(self, obj) -> str:
        # The last line of a traceback names the exception; the first never does.
        lines = [line for line in obj.error.strip().splitlines() if line.strip()]
        if not lines:
            return ""
        last = lines[-1].strip()
        more = "…" if len(last) > ERROR_PREVIEW_CHARS else ""
        return format_html('<span title="open the job for the full error">{}{}</span>', last[:ERROR_PREVIEW_CHARS], more)

    @admin.display(description="error")
    def error_display(self, obj) -> str:
        return format_html('<div class="error-full">{}</div>', obj.error) if obj.error else "—"

    @admin.display(description="payload")
    def payload_display(self, obj) -> str:
        return format_html('<div class="error-full">{}</div>', json.dumps(obj.payload, indent=2, ensure_ascii=False))

    @admin.display(description="result")
    def result_display(self, obj) -> str:
        parts = result_parts(obj.result)
        if not parts:
            return "—" if obj.status != "succeeded" else "nothing to do"
        return format_html('<ul class="job-result">{}</ul>', format_html_join("", "<li>{}</li>", ((p,) for p in parts)))

    @admin.action(description="Retry selected failed or cancelled jobs", permissions=["change"])
    def retry_jobs(self, request, queryset):
        outcome = Outcome("Retry")
        for job in queryset.select_related("workspace").only("pk", "status", "workspace"):
            if job.status not in ("failed", "cancelled"):
                outcome.skipped += 1
                continue
            outcome.attempt(memory_job_retry, workspace=job.workspace, job_id=job.pk)
        outcome.report(self, request)

    @admin.action(description="Cancel selected pending or running jobs", permissions=["change"])
    def cancel_jobs(self, request, queryset):
        outcome = Outcome("Cancel")
        for job in queryset.select_related("workspace").only("pk", "status", "workspace"):
            if job.status not in ("pending", "running"):
                outcome.skipped += 1
                continue
            outcome.attempt(memory_job_cancel, workspace=job.workspace, job_id=job.pk)
        outcome.report(self, request)


@admin.register(ScopeState)
class ScopeStateAdmin(WorkspaceScopedAdmin, MachineWrittenAdmin):
    list_display = [
        "scope_col",
        "workspace",
        "conversation_link",
        "dirty_col",
        "pending_floors_col",
        "pending_tokens_col",
        "last_processed_floor_no",
        "item_count",
        "micro_count",
        "token_total",
        "last_extracted_at",
        "last_compacted_at",
    ]
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

    @admin.display(description="dirty", boolean=True, ordering="dirty")
    def dirty_col(self, obj) -> bool:
        return obj.dirty

    @admin.display(description="pending floors", ordering="pending_floors")
    def pending_floors_col(self, obj) -> int:
        return obj.pending_floors

    @admin.display(description="pending tokens", ordering="pending_tokens")
    def pending_tokens_col(self, obj) -> int:
        return obj.pending_tokens

    @admin.display(description="scope", ordering="scope_id")
    def scope_col(self, obj) -> str:
        return scope_link(obj.scope, obj.scope_id)

    @admin.display(description="memories")
    def memories_link(self, obj) -> str:
        return format_html('<a href="{}">memories of this scope</a>', scope_memories_url(obj.scope, obj.scope_id))

    @admin.display(description="due for compaction", boolean=True)
    def compaction_due(self, obj) -> bool:
        return ScopeState.objects.filter(pk=obj.pk).filter(compaction_due_q()).exists()

    @admin.display(description="conversation", ordering="conversation__external_id")
    def conversation_link(self, obj) -> str:
        if obj.conversation_id is None:
            return "—"
        url = reverse("admin:conversations_conversation_change", args=[obj.conversation_id])
        return format_html('<a href="{}">{}</a>', url, obj.conversation.external_id[:60])

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
