"""The review queue: pending memories of workspaces that require review.

Approve makes a memory active (so it can be injected into context), reject
deprecates it, and "save and approve" on its page applies an operator's edit
and approves in one step. Each decision is a version with the reviewer as actor.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.http import Http404, HttpResponseRedirect
from django.urls import reverse

from memories.admin import batch
from memories.admin.filters import ConfidenceFilter, ImportanceFilter
from memories.admin.memory_items import MemoryAdminBase, operator
from memories.models import MemoryItem, ReviewItem
from memories.services.items import memory_item_update

APPROVE_BUTTON = "_approve"
REJECT_BUTTON = "_reject"


@admin.register(ReviewItem)
class ReviewItemAdmin(MemoryAdminBase):
    list_filter = ["workspace", "scope", "type", "summary_tier", ImportanceFilter, ConfidenceFilter]
    # Least certain first (they most need a human), then oldest first (fairness).
    ordering = ["confidence", "created_at"]
    actions = ["approve_selected", "reject_selected"]
    change_form_template = "admin/memories/reviewitem/change_form.html"

    def get_queryset(self, request):
        return super().get_queryset(request).filter(lifecycle_status="pending", workspace__requires_review=True)

    def has_add_permission(self, request) -> bool:
        return False

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


def _decision(request) -> dict | None:
    if APPROVE_BUTTON in request.POST:
        return {"lifecycle_status": "active"}
    if REJECT_BUTTON in request.POST:
        return {"status": "deprecated"}
    return None
