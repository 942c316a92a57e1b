"""The changelist action "Redact the history of selected memories…".

It clears every earlier version of each selected memory. A memory's current
version holds its text too, and a memory with one version holds it nowhere
else: so the confirmation page also lists each memory's current content and
offers to redact it as well (replaced by the redaction mark, every version
that held text cleared, what was derived from it erased and derived again,
through the same lineage erasure service as "Redact and replace"). Never
"nothing to do" while text is left."""

from __future__ import annotations

from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse

from accounts.actors import Actor
from accounts.models import Workspace
from memories.admin.batch import ids_by_workspace
from memories.admin.labels import short
from memories.admin.outcomes import Outcome
from memories.admin.redaction import EXCERPT_CHARS, VERSION_COLUMNS, redactable_versions, version_rows
from memories.models import MemoryItem
from memories.services.lineage.erase import (
    memory_redact_and_replace_following_lineage,
    memory_versions_redact_following_lineage,
)
from memories.services.lineage.find import memory_descendants
from memories.services.redaction import REDACTED_PLACEHOLDER

# The confirmation page's two answers.
MODE_FIELD = "redact"
HISTORY = "history"
CURRENT = "current"  # the history and the current content
CURRENT_COLUMNS = ["memory", "current version", "type", "workspace", "content to clear"]


def _with_current_text(memory_ids: list[str]):
    """The selected memories whose live content still holds text."""
    return (MemoryItem.objects.filter(pk__in=memory_ids).exclude(content="").exclude(content=REDACTED_PLACEHOLDER)
            .select_related("workspace").only("pk", "version", "type", "content", "scope", "scope_id", "workspace")
            .order_by("pk"))


def _current_rows(items: list[MemoryItem]) -> list[tuple]:
    return [(item.pk, f"v{item.version}", item.type.replace("_", " "), item.workspace.name,
             short(item.content, EXCERPT_CHARS)) for item in items]


def _derived_count(queryset, memory_ids: list[str]) -> int:
    derived = set()
    # Ids per workspace are all the preview needs (not the items' rows).
    groups = ids_by_workspace(queryset.order_by().values_list("pk", "workspace_id"))
    workspaces = Workspace.objects.in_bulk(list(groups))
    for workspace_id, ids in groups.items():
        derived.update(memory_descendants(workspace=workspaces[workspace_id], memory_ids=ids))
    return len(derived - set(memory_ids))


def redact_history_action(modeladmin, request, queryset):
    memory_ids = list(queryset.values_list("pk", flat=True))
    can_replace = modeladmin.has_change_permission(request)
    if request.POST.get("post") != "yes":
        versions = redactable_versions(memory_ids)
        current = list(_with_current_text(memory_ids))
        context = {
            **modeladmin.admin_site.each_context(request),
            "title": "Redact memory history",
            "opts": modeladmin.model._meta,
            "media": modeladmin.media,
            "action": "redact_history",
            "selected_ids": [str(pk) for pk in memory_ids],
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "columns": VERSION_COLUMNS,
            "rows": version_rows(versions),
            "current_columns": CURRENT_COLUMNS,
            "current_rows": _current_rows(current),
            "can_replace": can_replace,
            "derived": _derived_count(queryset, memory_ids),
            "placeholder": REDACTED_PLACEHOLDER,
            "mode_field": MODE_FIELD,
            "history_mode": HISTORY,
            "current_mode": CURRENT,
        }
        return TemplateResponse(request, "admin/memories/memoryitem/redact_history.html", context)
    actor = Actor.for_user(request.user.pk)
    replace = request.POST.get(MODE_FIELD) == CURRENT
    if replace and not can_replace:
        # Rewriting the live content is a change as well as a redaction.
        raise PermissionDenied
    outcome = Outcome("Redact")
    replaced_ids: set[str] = set()
    if replace:
        for item in _with_current_text(memory_ids):
            if outcome.attempt(memory_redact_and_replace_following_lineage, workspace=item.workspace, actor=actor,
                               memory_id=item.pk, content=REDACTED_PLACEHOLDER, expected_version=item.version):
                replaced_ids.add(item.pk)
    holding_text = {version.memory_id for version in redactable_versions(memory_ids)} - replaced_ids
    rows = MemoryItem.objects.filter(pk__in=memory_ids).exclude(pk__in=replaced_ids).select_related("workspace").only(
        "pk", "scope", "scope_id", "workspace")
    for workspace, items in _items_by_workspace(rows):
        # Nothing left to clear where every earlier version is already redacted.
        to_redact = [item for item in items if item.pk in holding_text]
        outcome.skipped += len(items) - len(to_redact)
        redacted, refused, _report = memory_versions_redact_following_lineage(
            workspace=workspace, actor=actor, items=to_redact)
        outcome.succeeded += len(redacted)
        for _item, error in refused:
            outcome.fail(error)
    outcome.report(modeladmin, request)
    return None


def _items_by_workspace(items) -> list[tuple[object, list[MemoryItem]]]:
    """`items` (with their workspace selected) grouped by workspace."""
    groups: dict[str, tuple[object, list[MemoryItem]]] = {}
    for item in items:
        groups.setdefault(item.workspace_id, (item.workspace, []))[1].append(item)
    return list(groups.values())
