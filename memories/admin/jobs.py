"""Background jobs: readable lists, full errors, links to the scope's
memories; retry / cancel jobs. (Per-scope state: `scopes.py`.)"""

from __future__ import annotations

import json
import re
from urllib.parse import urlencode

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from accounts.admin_scope import WorkspaceScopedAdmin
from memories.admin.job_display import job_memories, result_parts, result_summary, took, when
from memories.admin.labels import TOKEN_CHARS, id_token, scope_label_html, scope_text, short
from memories.admin.outcomes import Outcome
from memories.models import MemoryJob
from memories.services.jobs import memory_job_cancel, memory_job_retry

ERROR_PREVIEW_CHARS = 90
# "memory_project.errors.ValidationError: ..." reads as "ValidationError: ...".
EXCEPTION_PATH_RE = re.compile(r"^(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_]\w*(?::|$))")
# A token longer than an id token (an id, a path) is shown by its head.
LONG_TOKEN_RE = re.compile(rf"(\S{{{TOKEN_CHARS + 1},}})")


def scope_memories_url(scope: str | None, scope_id: str) -> str:
    query = {"scope__exact": scope or "", "scope_id": scope_id}
    return f"{reverse('admin:memories_memoryitem_changelist')}?{urlencode(query)}"


def scope_link(scope: str | None, scope_id: str) -> str:
    if not scope:
        return "—"
    return format_html(
        '<a href="{}" title="memories of {}">{}</a>',
        scope_memories_url(scope, scope_id), scope_text(scope, scope_id), scope_label_html(scope, scope_id),
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
        # The attempts under the state: a column of their own cost the list its fit at 1280 px.
        attempts = f"{obj.attempts} attempt{'' if obj.attempts == 1 else 's'}"
        return format_html('<span class="job-state job-state-{}">{}</span><br><span class="quiet nowrap">{}</span>',
                           obj.status, obj.status, attempts)

    @admin.display(description="outcome")
    def outcome(self, obj) -> str:
        if obj.error:
            return self.error_preview(obj)
        if obj.status == "succeeded":
            return format_html('<span class="job-result">{}</span>', result_summary(obj.result))
        return ""

    @admin.display(description="created / took", ordering="created_at")
    def created_col(self, obj) -> str:
        # The tokens under the time taken: a column of their own cost the
        # list its fit at 1280 px.
        return format_html(
            '<span class="nowrap">{}</span><br><span class="quiet">{}</span><br><span class="quiet nowrap">{}</span>',
            f"{obj.created_at:%Y-%m-%d %H:%M:%S}",
            took(obj) or obj.status,
            f"{obj.input_tokens:,} / {obj.output_tokens:,} tokens",
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
        # The exception's name without its module path; ids and other long
        # tokens shortened whole (a narrow column would break them mid-token).
        last = EXCEPTION_PATH_RE.sub("", lines[-1].strip())
        more = "…" if len(last) > ERROR_PREVIEW_CHARS else ""
        pieces = LONG_TOKEN_RE.split(last[:ERROR_PREVIEW_CHARS])
        text = format_html_join("", "{}", ((id_token(p) if i % 2 else p,) for i, p in enumerate(pieces)))
        return format_html('<span title="open the job for the full error">{}{}</span>', text, more)

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
