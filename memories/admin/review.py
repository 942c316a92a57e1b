"""The review queue: pending memories of workspaces that require review.

Approve makes a memory active (so it can be injected into context), reject
deprecates it, and "save and approve" on its page applies an operator's edit
and approves in one step. Each decision is a version with the reviewer as actor.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme

import memories.admin.batch as batch
from accounts.admin_scope import scope_queryset
from memories.admin.columns import MemoryChangeList
from memories.admin.filters import ConfidenceFilter, ImportanceFilter
from memories.admin.memory_items import MemoryAdminBase, operator
from memories.admin.review_context import context_html, review_contexts
from memories.models import MemoryItem, ReviewItem
from memories.services.items import memory_item_update
from memory_project.errors import DomainError

# Source floors shown beside a memory in the queue, and on its page.
LIST_SOURCES = 3
PAGE_SOURCES = 8
APPROVE_BUTTON = "_approve"
REJECT_BUTTON = "_reject"


@admin.register(ReviewItem)
class ReviewItemAdmin(MemoryAdminBase):
    # Each row shows the memory beside the message it was drawn from, with
    # approve / reject buttons: most items are decided without leaving the list.
    list_display = ["excerpt_col", "source_message", "kind", "scores", "decide"]
    show_source_text = True
    list_filter = ["workspace", "scope", "type", "summary_tier", ImportanceFilter, ConfidenceFilter]
    # Least certain first (they most need a human), then oldest first (fairness).
    ordering = ["confidence", "created_at"]
    actions = ["approve_selected", "reject_selected"]
    change_form_template = "admin/memories/reviewitem/change_form.html"
    changelist_title = "Review queue"

    def get_queryset(self, request):
        return super().get_queryset(request).filter(lifecycle_status="pending", workspace__requires_review=True)

    def get_changelist(self, request, **kwargs):
        return ReviewChangeList

    def has_add_permission(self, request) -> bool:
        return False

    @admin.display(description="extracted from")
    def source_message(self, obj) -> str:
        # The floors the memory was drawn from (for a summary: the floors it
        # covers and its first sources), read for the whole page at once.
        context = getattr(obj, "review_context", None)
        if context is None:
            context = review_contexts([obj], shown=LIST_SOURCES)[obj.pk]
        return context_html(context)

    @admin.display(description="decision")
    def decide(self, obj) -> str:
        # Buttons of the changelist's own form (so its CSRF token travels
        # along), posted to this row's decision URL with the version shown:
        # a memory changed meanwhile is refused, never decided unseen.
        url = reverse("admin:memories_reviewitem_decide", args=[quote(obj.pk)])
        return format_html(
            '<div class="review-buttons">'
            '<button type="submit" class="button approve-button" formaction="{}" formmethod="post" '
            'name="decision" value="approve@{}">Approve</button>'
            '<button type="submit" class="button reject-button" formaction="{}" formmethod="post" '
            'name="decision" value="reject@{}">Reject</button>'
            "</div>",
            url,
            obj.version,
            url,
            obj.version,
        )

    def get_urls(self):
        decide = path(
            "<path:object_id>/decide/",
            self.admin_site.admin_view(self.decide_view),
            name="memories_reviewitem_decide",
        )
        return [decide, *super().get_urls()]

    def decide_view(self, request, object_id):
        """Approve or reject one queued memory from its row in the queue."""
        if not self.has_change_permission(request):
            raise PermissionDenied
        back = _back_to_queue(request)
        # This page's queryset: the operator's workspaces, queued memories only.
        item = self.get_object(request, unquote(object_id))
        if item is None:
            # Most often decided a moment ago (a second click, another reviewer);
            # a memory of another workspace (or none at all) is simply not here.
            decided = scope_queryset(MemoryItem.objects.filter(pk=unquote(object_id)), request).exists()
            if request.method != "POST" or not decided:
                raise Http404("No such memory in the review queue.")
            self.message_user(request, "That memory no longer awaits review.", messages.WARNING)
            return HttpResponseRedirect(back)
        if not self.has_change_permission(request, item):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        verb, _sep, version = request.POST.get("decision", "").partition("@")
        changes = {"approve": {"lifecycle_status": "active"}, "reject": {"status": "deprecated"}}.get(verb)
        if changes is None or not version.isdigit():
            self.message_user(request, "Unknown decision.", messages.ERROR)
            return HttpResponseRedirect(back)
        try:
            memory_item_update(
                workspace=item.workspace,
                actor=operator(request),
                memory_id=item.pk,
                changes=changes,
                expected_version=int(version),
            )
        except DomainError as error:
            self.message_user(request, f"Not decided: {error.message}", messages.ERROR)
        else:
            done = "Approved" if verb == "approve" else "Rejected"
            self.message_user(request, f"{done} memory {item.pk}.", messages.SUCCESS)
        return HttpResponseRedirect(back)

    @admin.action(description="Approve selected memories", permissions=["change"])
    def approve_selected(self, request, queryset):
        batch.set_lifecycle(queryset, actor=operator(request), lifecycle_status="active", verb="Approve").report(
            self, request
        )

    @admin.action(description="Reject (deprecate) selected memories", permissions=["change"])
    def reject_selected(self, request, queryset):
        batch.set_status(queryset, actor=operator(request), status="deprecated", verb="Reject").report(self, request)

    def save_model(self, request, obj, form, change):
        decision = _decision(request)
        if decision is None:
            return super().save_model(request, obj, form, change)
        # The edit and the decision are one write, so one version records both.
        changes = {**form.changes(), **decision}
        changes.pop("status" if "lifecycle_status" in decision else "lifecycle_status", None)
        memory_item_update(
            workspace=obj.workspace,
            actor=operator(request),
            memory_id=obj.pk,
            changes=changes,
            expected_version=form.cleaned_data.get("expected_version") or obj.version,
        )

    def response_change(self, request, obj):
        decision = _decision(request)
        if decision is not None:
            verb = "Approved" if "lifecycle_status" in decision else "Rejected"
            self.message_user(request, f"{verb} memory {obj.pk}.", messages.SUCCESS)
            return HttpResponseRedirect(reverse("admin:memories_reviewitem_changelist"))
        return super().response_change(request, obj)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        if request.method == "GET" and not self.get_queryset(request).filter(pk=unquote(object_id)).exists():
            # Decided meanwhile (or never needed review): show it on the main
            # page, if the operator may see it there; otherwise it is not here.
            memories = self.admin_site._registry[MemoryItem]
            item = memories.get_object(request, unquote(object_id))
            if item is None or not memories.has_view_or_change_permission(request, item):
                raise Http404("No such memory in the review queue.")
            return HttpResponseRedirect(reverse("admin:memories_memoryitem_change", args=[object_id]))
        return super().change_view(request, object_id, form_url, extra_context)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["review_context"] = context_html(review_contexts([obj], shown=PAGE_SOURCES)[obj.pk])
        return super().render_change_form(request, context, add, change, form_url, obj)


class ReviewChangeList(MemoryChangeList):
    """The queue's page, with each memory's review context read at once."""

    def get_results(self, request):
        super().get_results(request)
        contexts = review_contexts(self.result_list, shown=LIST_SOURCES)
        for row in self.result_list:
            row.review_context = contexts.get(row.pk)


def _back_to_queue(request) -> str:
    """The queue page the operator decided from (its filters and page kept)."""
    queue = reverse("admin:memories_reviewitem_changelist")
    referer = request.META.get("HTTP_REFERER", "")
    if referer and url_has_allowed_host_and_scheme(referer, allowed_hosts={request.get_host()}):
        parts = urlsplit(referer)
        if parts.path == queue:
            return f"{queue}?{parts.query}" if parts.query else queue
    return queue


def _decision(request) -> dict | None:
    if APPROVE_BUTTON in request.POST:
        return {"lifecycle_status": "active"}
    if REJECT_BUTTON in request.POST:
        return {"status": "deprecated"}
    return None
