"""Versions (immutable; redact and restore only) and edges (through the edge
services)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin.utils import quote
from django.contrib.admin.views.main import ChangeList
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from accounts.actors import Actor
from accounts.admin_scope import WorkspaceScopedAdmin
from memories.admin.labels import ActorNames, actor_names
from memories.admin.logging import ContentFreeLogMixin
from memories.admin.outcomes import Outcome, confirmation_page
from memories.admin.redaction import VERSION_COLUMNS, version_rows
from memories.admin.visibility import hide_unapproved
from memories.models import MemoryEdge, MemoryItem, MemoryVersion
from memories.services.edges import memory_edge_create, memory_edge_delete, memory_edge_update
from memories.services.items import memory_item_restore
from memories.services.lineage.erase import memory_version_redact_following_lineage
from memory_project.errors import DomainError

REDACT_PERMISSION = "memories.redact_memoryversion"


@admin.register(MemoryVersion)
class MemoryVersionAdmin(WorkspaceScopedAdmin, ContentFreeLogMixin, admin.ModelAdmin):
    # Narrow enough for 1280 px: the version number is the link, the workspace
    # is the memory's second line.
    list_display = ["version_col", "memory_link", "operation", "actor", "size", "written", "redacted"]
    list_display_links = ["version_col"]
    list_filter = ["operation", ("redacted_at", admin.EmptyFieldListFilter), "actor_type", "workspace"]
    search_fields = ["=memory_id", "=id", "=actor_api_key_id", "=actor_session_id", "=actor_job_id"]
    search_help_text = "A memory id, version id, API key, session or job id (exact)."
    list_select_related = ["workspace"]
    list_per_page = 100
    show_full_result_count = False
    date_hierarchy = "created_at"
    actions = ["redact_selected", "restore_selected"]
    fields = [
        "id",
        "memory_link",
        "workspace",
        "store",
        "operation",
        "version",
        "content_display",
        "content_sha256",
        "content_size_bytes",
        "path",
        "attributes",
        "actor",
        "created_at",
        "redacted_at",
        "redacted_by",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        queryset = hide_unapproved(request, super().get_queryset(request), versions=True)
        match = getattr(request, "resolver_match", None)
        if match is not None and (match.url_name or "").endswith("_changelist"):
            queryset = queryset.defer("content", "attributes", "path")
        return queryset

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        # Versions go by redaction or retention, never by hand.
        return False

    def has_redact_permission(self, request) -> bool:
        return request.user.has_perm(REDACT_PERMISSION)

    def has_restore_permission(self, request) -> bool:
        return request.user.has_perm("memories.change_memoryitem")

    @admin.display(description="memory", ordering="memory_id")
    def memory_link(self, obj) -> str:
        url = reverse("admin:memories_memoryitem_change", args=[quote(obj.memory_id)])
        return format_html('<a href="{}">{}</a><br><span class="quiet">{}</span>', url, obj.memory_id, obj.workspace.name)

    @admin.display(description="version", ordering="version")
    def version_col(self, obj) -> str:
        return format_html('<span class="nowrap" title="{}">v{}</span>', obj.pk, obj.version)

    @admin.display(description="written", ordering="created_at")
    def written(self, obj) -> str:
        return format_html('<span class="nowrap">{}</span>', f"{obj.created_at:%Y-%m-%d %H:%M:%S}")

    def get_changelist(self, request, **kwargs):
        return VersionChangeList

    @admin.display(description="by")
    def actor(self, obj) -> str:
        return _names(obj).link(obj, "actor")

    @admin.display(description="redacted by")
    def redacted_by(self, obj) -> str:
        return _names(obj).link(obj, "redacted_by") if obj.redacted_by_type else "—"

    @admin.display(description="size", ordering="content_size_bytes")
    def size(self, obj) -> str:
        return "—" if obj.content_size_bytes is None else f"{obj.content_size_bytes} B"

    @admin.display(description="redacted", boolean=True, ordering="redacted_at")
    def redacted(self, obj) -> bool:
        return obj.redacted_at is not None

    @admin.display(description="content")
    def content_display(self, obj) -> str:
        if obj.redacted_at is not None:
            return mark_safe('<span class="redacted-note">redacted</span>')  # noqa: S308 - a constant
        return format_html('<div class="diff">{}</div>', obj.content or "")

    @admin.action(description="Redact selected versions…", permissions=["redact"])
    def redact_selected(self, request, queryset):
        versions = list(queryset.filter(redacted_at__isnull=True).order_by("memory_id", "version"))
        heads = set(
            MemoryItem.objects.filter(current_version_id__in=[v.pk for v in versions]).values_list(
                "current_version_id", flat=True
            )
        )
        if request.POST.get("post") != "yes":
            clearable = [v for v in versions if v.pk not in heads]
            question = f"Clear the content of these {len(clearable)} version(s) for good? This cannot be undone."
            if heads:
                question += f" {len(heads)} selected version(s) are the current content of a live memory and are skipped."
            return confirmation_page(
                self,
                request,
                queryset,
                action="redact_selected",
                title="Redact memory versions",
                question=question,
                rows=version_rows(clearable),
                extra={"columns": VERSION_COLUMNS, "confirm_label": "Yes, redact these versions"},
            )
        actor = Actor.for_user(request.user.pk)
        outcome = Outcome("Redact")
        outcome.skipped = queryset.count() - len(versions) + len(heads)
        for version in versions:
            if version.pk in heads:
                continue
            outcome.attempt(memory_version_redact_following_lineage, workspace=version.workspace,
                            version_id=version.pk, actor=actor)
        outcome.report(self, request)
        return None

    @admin.action(description="Restore the memory to the selected version", permissions=["restore"])
    def restore_selected(self, request, queryset):
        actor = Actor.for_user(request.user.pk)
        outcome = Outcome("Restore")
        seen: set[str] = set()
        for version in queryset.select_related("workspace").defer("content").order_by("-version"):
            if version.memory_id in seen:
                # Two versions of one memory: only the newest selected one wins.
                outcome.skipped += 1
                continue
            seen.add(version.memory_id)
            try:
                memory_item_restore(
                    workspace=version.workspace, actor=actor, memory_id=version.memory_id, version_id=version.pk
                )
            except DomainError as error:
                outcome.fail(error)
            else:
                outcome.succeeded += 1
        outcome.report(self, request)


class VersionChangeList(ChangeList):
    """Names the page's actors (key names, operators, job kinds) in one query each."""

    def get_results(self, request):
        super().get_results(request)
        names = actor_names(self.result_list, prefixes=("actor", "redacted_by"))
        for row in self.result_list:
            row.actor_names = names


def _names(obj) -> ActorNames:
    return getattr(obj, "actor_names", None) or actor_names([obj], prefixes=("actor", "redacted_by"))


@admin.register(MemoryEdge)
class MemoryEdgeAdmin(WorkspaceScopedAdmin, admin.ModelAdmin):
    list_display = ["id", "from_link", "relation", "to_link", "workspace", "created_at"]
    list_filter = ["relation", "workspace"]
    search_fields = ["=id", "=from_item__id", "=to_item__id"]
    search_help_text = "An edge id or the id of either memory (exact)."
    list_select_related = ["workspace"]
    autocomplete_fields = ["from_item", "to_item"]
    readonly_fields = ["id", "workspace", "created_at"]
    fields = ["id", "workspace", "from_item", "relation", "to_item", "created_at"]
    list_per_page = 100

    def get_readonly_fields(self, request, obj=None):
        if obj is not None:
            return [*self.readonly_fields, "from_item", "to_item"]
        return self.readonly_fields

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    @admin.display(description="from", ordering="from_item_id")
    def from_link(self, obj) -> str:
        return format_html('<a href="{}">{}</a>', reverse("admin:memories_memoryitem_change", args=[quote(obj.from_item_id)]), obj.from_item_id)

    @admin.display(description="to", ordering="to_item_id")
    def to_link(self, obj) -> str:
        return format_html('<a href="{}">{}</a>', reverse("admin:memories_memoryitem_change", args=[quote(obj.to_item_id)]), obj.to_item_id)

    def save_model(self, request, obj, form, change):
        if change:
            memory_edge_update(workspace=obj.workspace, edge_id=obj.pk, relation=obj.relation)
            return
        created = memory_edge_create(
            workspace=obj.from_item.workspace, from_id=obj.from_item_id, to_id=obj.to_item_id, relation=obj.relation
        )
        obj.pk = created.pk
        obj.workspace_id = created.workspace_id

    def delete_model(self, request, obj):
        memory_edge_delete(workspace=obj.workspace, edge_id=obj.pk)

    @admin.action(description="Delete selected edges…", permissions=["delete"])
    def delete_edges(self, request, queryset):
        if request.POST.get("post") != "yes":
            rows = [(e.pk, e.from_item_id, e.relation, e.to_item_id) for e in queryset[:500]]
            return confirmation_page(
                self,
                request,
                queryset,
                action="delete_edges",
                title="Delete memory edges",
                question=f"Delete these {queryset.count()} edge(s)? The memories they join stay.",
                rows=rows,
                extra={"columns": ["edge", "from", "relation", "to"]},
            )
        outcome = Outcome("Delete")
        for edge in queryset.select_related("workspace"):
            outcome.attempt(memory_edge_delete, workspace=edge.workspace, edge_id=edge.pk)
        outcome.report(self, request)
        return None

    actions = ["delete_edges"]

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except DomainError as error:
            self.message_user(request, f"Not saved: {error.message}", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())
