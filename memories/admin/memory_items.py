"""The memories changelist and a memory's page. Every write goes through the
item services with the operator as actor; the page shows the version history
with diffs, the edges and the source floor."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect
from django.urls import path, reverse

import memories.admin.batch as batch
import memories.admin.redact_history as redact_history
import memories.admin.redaction as redaction
from accounts.actors import Actor
from accounts.admin_scope import WorkspaceScopedAdmin
from conversations.selectors.references import message_places
from memories.admin.columns import MemoryChangeList, MemoryColumns, changelist_queryset, review_rank, search_memories
from memories.admin.dashboard import dashboard_view
from memories.admin.filters import (
    ConfidenceFilter,
    ImportanceFilter,
    JobFilter,
    LastUsedFilter,
    NeedsReviewFilter,
    PathPrefixFilter,
    ReportedStatusFilter,
    ScopeIdFilter,
    StoreIdFilter,
)
from memories.admin.forms import MemoryCreateForm, MemoryItemForm
from memories.admin.history import conversation_floor_url, item_edges, scope_conversation, source_floor, version_history
from memories.admin.logging import ContentFreeLogMixin
from memories.admin.outcomes import confirmation_page
from memories.admin.visibility import HIDDEN_TEXT, approved_only, hide_unapproved
from memories.models import MemoryItem, MemoryVersion, Scope
from memories.services.items import memory_item_create, memory_item_update
from memories.services.lineage.erase import memory_delete_following_lineage
from memories.services.store_memories import store_memory_put
from memory_project.errors import DomainError

REDACT_PERMISSION = "memories.redact_memoryversion"

READONLY_FIELDS = (
    "id",
    "workspace",
    "scope",
    "scope_id",
    "type",
    "store",
    "path",
    "source_floor_id",
    "source_message_id",
    "sources_display",
    "source_job",
    "coverage_start_floor_no",
    "coverage_end_floor_no",
    "derived_from_count",
    "version",
    "current_version_id",
    "content_sha256",
    "content_size_bytes",
    "token_count_estimate",
    "last_used_at",
    "expires_at",
    "created_at",
    "updated_at",
)


def operator(request) -> Actor:
    return Actor.for_user(request.user.pk)


class MemoryAdminBase(WorkspaceScopedAdmin, ContentFreeLogMixin, MemoryColumns, admin.ModelAdmin):
    """What the memories page and the review queue share. Every page of its
    own reads the memory through `get_object` (this page's queryset, so the
    operator's workspaces and, for the queue, only queued memories) and asks
    the same object permission as the change page."""

    # The excerpt is the link (the id is its tooltip and is searchable): the
    # text is what an operator judges a row by.
    # Seven narrow columns, so the list fits a 1280 px screen beside its
    # filters: scores share a column, the workspace is the source's last line.
    list_display = [
        "excerpt_col",
        "kind",
        "scores",
        "state",
        "source",
        "dates",
    ]
    list_display_links = ["excerpt_col"]
    search_fields = ["content", "fact_key"]
    search_help_text = "Text in the content or fact key (any language, e.g. 咖啡), or a memory id."
    list_select_related = ["workspace", "store"]
    list_per_page = 50
    # The second COUNT(*) over the whole table is the slowest query of a large
    # changelist and tells an operator little.
    show_full_result_count = False
    form = MemoryItemForm
    readonly_fields = READONLY_FIELDS
    change_form_template = "admin/memories/memoryitem/change_form.html"

    def get_queryset(self, request):
        queryset = hide_unapproved(request, super().get_queryset(request))
        match = getattr(request, "resolver_match", None)
        if match is not None and match.url_name and match.url_name.endswith("_changelist"):
            return changelist_queryset(queryset)
        return queryset.select_related("workspace", "store")

    def get_changelist(self, request, **kwargs):
        return MemoryChangeList

    # The page's heading ("Select memory item to change" by default).
    changelist_title = "Memories"

    def changelist_view(self, request, extra_context=None):
        can_redact_everywhere = self.has_redact_everywhere_permission(request)
        return super().changelist_view(
            request,
            {"title": self.changelist_title, "can_redact_everywhere": can_redact_everywhere, **(extra_context or {})},
        )

    def get_search_results(self, request, queryset, search_term):
        return search_memories(queryset, search_term), False

    def has_redact_permission(self, request) -> bool:
        return request.user.has_perm(REDACT_PERMISSION)

    def has_redact_everywhere_permission(self, request) -> bool:
        # Live content is rewritten too: the change permission as well.
        return self.has_change_permission(request) and self.has_redact_permission(request)

    def get_actions(self, request):
        actions = super().get_actions(request)
        # The stock bulk delete bypasses the services (no `deleted` versions).
        actions.pop("delete_selected", None)
        return actions

    # --- the edit page ------------------------------------------------------

    def get_fieldsets(self, request, obj=None):
        if obj is None:
            return [(None, {"fields": MemoryCreateForm._meta.fields})]
        if obj.scope == Scope.STORE:
            # Store documents are edited through the store service: content only.
            editable = ("content", "expected_version")
            classification = ("status", "lifecycle_status")
        else:
            editable = ("content", "expected_version")
            classification = ("summary_tier", "fact_key", "due_date", "metadata", "importance", "confidence", "status",
                              "lifecycle_status")
        return [
            ("Content", {"fields": editable}),
            ("Classification", {"fields": ("type", *classification)}),
            ("Where", {"fields": ("workspace", "scope", "scope_id", "store", "path")}),
            (
                "Provenance",
                {
                    "fields": (
                        "sources_display",
                        "source_message_id",
                        "source_floor_id",
                        "source_job",
                        "coverage_start_floor_no",
                        "coverage_end_floor_no",
                        "derived_from_count",
                    ),
                    "classes": ("collapse",),
                },
            ),
            (
                "Bookkeeping",
                {
                    "fields": (
                        "id",
                        "version",
                        "current_version_id",
                        "content_sha256",
                        "content_size_bytes",
                        "token_count_estimate",
                        "last_used_at",
                        "expires_at",
                        "created_at",
                        "updated_at",
                    ),
                    "classes": ("collapse",),
                },
            ),
        ]

    @admin.display(description="sources")
    def sources_display(self, obj):
        """Every message the memory was made from, linked to its floor on the
        conversation's page (and the summaries a macro compacts)."""
        from django.urls import reverse
        from django.utils.html import format_html, format_html_join


        ids = list(obj.sources or [])
        messages = message_places(workspace_id=obj.workspace_id, message_ids=ids)
        links = []
        for message_id in ids:
            message = messages.get(message_id)
            if message is None:
                links.append((message_id, "#", "(gone)"))
                continue
            # On its own branch, the page around it: a floor on another
            # branch, or further down, is not on the conversation's first page.
            links.append((f"#{message.floor_no}", conversation_floor_url(message), ""))
        parts = format_html_join(", ", '<a href="{1}">{0}</a>{2}', links) if links else "-"
        compacted = list(obj.source_memory_ids or [])
        if compacted:
            memory_links = format_html_join(", ", '<a href="{}">{}</a>', (
                # The memories list, which shows every memory: the review
                # queue (this admin's subclass) shows only pending ones.
                (reverse("admin:memories_memoryitem_change", args=[quote(pk)]), pk) for pk in compacted))
            return format_html("{} messages: {}<br>compacts {} summaries: {}", len(ids), parts, len(compacted),
                               memory_links)
        return format_html("{} messages: {}", len(ids), parts)

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        fields = list(READONLY_FIELDS)
        if obj.scope == Scope.STORE:
            # A document's status is set from the changelist's batch actions.
            fields += ["status", "lifecycle_status"]
        return fields

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = MemoryCreateForm
        return super().get_form(request, obj, change=change, **kwargs)

    def save_model(self, request, obj, form, change):
        actor = operator(request)
        if not change:
            data = form.cleaned_data
            created = memory_item_create(
                workspace=data["workspace"],
                actor=actor,
                **{name: data[name] for name in MemoryCreateForm._meta.fields if name != "workspace"},
            )
            obj.pk = created.pk
            return
        changes = form.changes()
        expected = form.cleaned_data.get("expected_version") or obj.version
        if not changes:
            return
        if obj.scope == Scope.STORE:
            store_memory_put(
                workspace=obj.workspace,
                store_id=obj.store_id,
                memory_id=obj.pk,
                content=changes.get("content", obj.content),
                version=expected,
                actor=actor,
            )
        else:
            memory_item_update(
                workspace=obj.workspace, actor=actor, memory_id=obj.pk, changes=changes, expected_version=expected
            )

    def save_related(self, request, form, formsets, change):
        # No inlines or many-to-many fields: nothing of the memory is saved here.
        return None

    def delete_model(self, request, obj):
        # Summaries compacted from the memory go with it.
        memory_delete_following_lineage(workspace=obj.workspace, actor=operator(request), memory_id=obj.pk)

    def delete_queryset(self, request, queryset):
        batch.delete(queryset, actor=operator(request))

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except DomainError as error:
            # The form's own checks catch the common cases with the input kept;
            # this is the race the row lock decided (or a rule only the service
            # knows). Nothing was written: the admin's transaction rolled back.
            self.message_user(request, f"Not saved: {error.message}", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def delete_view(self, request, object_id, extra_context=None):
        try:
            return super().delete_view(request, object_id, extra_context)
        except DomainError as error:
            self.message_user(request, f"Not deleted: {error.message}", messages.ERROR)
            return HttpResponseRedirect(reverse(f"admin:memories_{self.opts.model_name}_change", args=[object_id]))

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        # A memory's page: the object Django looked up (and checked the
        # operator may see) with its history, edges and sources.
        if obj is not None:
            outgoing, incoming = item_edges(obj, approved_only=approved_only(request, obj.workspace))
            context.update(
                history=version_history(
                    workspace_id=obj.workspace_id, memory_id=obj.pk, head_version_id=obj.current_version_id
                ),
                outgoing_edges=outgoing,
                incoming_edges=incoming,
                hidden_text=HIDDEN_TEXT,
                source_floor=source_floor(obj),
                scope_conversation=scope_conversation(obj),
                can_redact=self.has_redact_permission(request),
                can_restore=self.has_change_permission(request, obj),
                memory=obj,
            )
        return super().render_change_form(request, context, add, change, form_url, obj)

    # --- pages of their own ---------------------------------------------------

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        wrap = self.admin_site.admin_view
        custom = [
            path("redact_everywhere/", wrap(self.redact_everywhere_view), name="{}_{}_redact_everywhere".format(*info)),
            path("<path:object_id>/source/", wrap(self.source_view), name="{}_{}_source".format(*info)),
            path(
                "<path:object_id>/restore/<str:version_id>/",
                wrap(self.restore_view),
                name="{}_{}_restore".format(*info),
            ),
            path(
                "<path:object_id>/redact/<str:version_id>/",
                wrap(self.redact_version_view),
                name="{}_{}_redact_version".format(*info),
            ),
            path(
                "<path:object_id>/redact_and_replace/",
                wrap(self.redact_and_replace_view),
                name="{}_{}_redact_and_replace".format(*info),
            ),
        ]
        return custom + super().get_urls()

    def memory_or_404(self, request, object_id: str) -> MemoryItem:
        """The memory as the change page would show it, or 404 (missing, or in
        another workspace, or not on this page's queryset)."""
        item = self.get_object(request, object_id)
        if item is None:
            raise Http404("No such memory.")
        return item

    def source_view(self, request, object_id):
        item = self.memory_or_404(request, unquote(object_id))
        if not self.has_view_or_change_permission(request, item):
            raise PermissionDenied
        found = source_floor(item)
        if found is None:
            self.message_user(request, "The source message of this memory no longer exists.", messages.WARNING)
            return HttpResponseRedirect(reverse(f"admin:memories_{self.opts.model_name}_change", args=[quote(item.pk)]))
        return HttpResponseRedirect(found.url)

    def restore_view(self, request, object_id, version_id):
        return redaction.restore_view(self, request, unquote(object_id), unquote(version_id))

    def redact_version_view(self, request, object_id, version_id):
        return redaction.redact_version_view(self, request, unquote(object_id), unquote(version_id))

    def redact_and_replace_view(self, request, object_id):
        return redaction.redact_and_replace_view(self, request, unquote(object_id))

    def redact_everywhere_view(self, request):
        return redaction.redact_everywhere_view(self, request)

    # --- actions ----------------------------------------------------------------

    @admin.action(description="Deprecate selected memories", permissions=["change"])
    def deprecate_selected(self, request, queryset):
        batch.set_status(queryset, actor=operator(request), status="deprecated", verb="Deprecate").report(self, request)

    @admin.action(description="Reactivate selected memories", permissions=["change"])
    def reactivate_selected(self, request, queryset):
        batch.set_status(queryset, actor=operator(request), status="active", verb="Reactivate").report(self, request)

    @admin.action(description="Delete selected memories…", permissions=["delete"])
    def delete_memories(self, request, queryset):
        if request.POST.get("post") != "yes":
            rows = [
                (item.pk, item.type, item.workspace.name, f"version {item.version}")
                for item in queryset.select_related("workspace").defer("content")[:500]
            ]
            return confirmation_page(
                self,
                request,
                queryset,
                action="delete_memories",
                title="Delete memories",
                question=(
                    f"Delete these {queryset.count()} memories? Each gets a final `deleted` version; earlier "
                    "versions stay until redacted or until the retention period ends."
                ),
                rows=rows,
                extra={"columns": ["memory", "type", "workspace", "current"]},
            )
        batch.delete(queryset, actor=operator(request)).report(self, request)
        return None

    @admin.action(description="Redact the history of selected memories…", permissions=["redact"])
    def redact_history(self, request, queryset):
        return redact_history.redact_history_action(self, request, queryset)


@admin.register(MemoryItem)
class MemoryItemAdmin(MemoryAdminBase):
    list_filter = [
        NeedsReviewFilter,
        "workspace",
        "scope",
        "type",
        "summary_tier",
        ReportedStatusFilter,
        "lifecycle_status",
        ImportanceFilter,
        ConfidenceFilter,
        LastUsedFilter,
        StoreIdFilter,
        PathPrefixFilter,
        ScopeIdFilter,
        JobFilter,
    ]
    # What most needs a look first: pending review, then the least certain,
    # then the newest.
    ordering = [review_rank().asc(), "confidence", "-created_at"]
    actions = ["deprecate_selected", "reactivate_selected", "delete_memories", "redact_history"]

    def get_urls(self):
        dashboard = path(
            "dashboard/",
            self.admin_site.admin_view(lambda request: dashboard_view(self, request)),
            name="memories_dashboard",
        )
        return [dashboard, *super().get_urls()]


__all__ = ["MemoryAdminBase", "MemoryItemAdmin", "MemoryVersion", "operator"]
