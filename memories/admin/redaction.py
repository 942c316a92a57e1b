"""Restore and redaction pages of a memory. Redaction always shows the exact
versions it will clear and asks before doing it; it needs its own permission."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.utils import quote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from accounts.actors import Actor
from accounts.admin_scope import visible_workspaces
from memories.admin.forms import RedactAndReplaceForm, RedactEverywhereForm
from memories.admin.labels import actor_names
from memories.admin.text_places import places_sentence, text_places
from memories.admin.visibility import HIDDEN_TEXT, approved_only, readable_text
from memories.models import MemoryItem, MemoryVersion
from memories.services.items import memory_item_restore
from memories.services.lineage.erase import (
    memory_redact_and_replace_following_lineage,
    memory_version_redact_following_lineage,
)
from memories.services.lineage.find import memory_descendants
from memories.services.lineage.text import workspace_text_occurrences, workspace_text_redact
from memory_project.errors import DomainError

EXCERPT_CHARS = 120


def _change_url(modeladmin, object_id: str) -> str:
    return reverse(f"admin:memories_{modeladmin.opts.model_name}_change", args=[quote(object_id)])


def _excerpt(version: MemoryVersion) -> str:
    text = version.content or ""
    return text[:EXCERPT_CHARS] + ("…" if len(text) > EXCERPT_CHARS else "")


def version_rows(versions: list[MemoryVersion]) -> list[tuple]:
    names = actor_names(versions)
    return [
        (
            v.memory_id,
            f"v{v.version} ({v.pk})",
            v.operation,
            v.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            names.label(v, "actor"),
            f"{v.content_size_bytes or 0} B",
            _excerpt(v),
        )
        for v in versions
    ]


# Seven columns that fit a 1280 px screen; the text to clear gets the room.
VERSION_COLUMNS = ["memory", "version", "operation", "written", "by", "size", "content to clear"]


def redactable_versions(memory_ids: list[str]) -> list[MemoryVersion]:
    """Versions that still hold text and are not the live head of their memory:
    exactly what `memory_versions_redact` will clear."""
    heads = set(
        MemoryItem.objects.filter(pk__in=memory_ids)
        .exclude(current_version_id=None)
        .values_list("current_version_id", flat=True)
    )
    versions = MemoryVersion.objects.filter(memory_id__in=memory_ids, redacted_at__isnull=True).order_by(
        "memory_id", "version"
    )
    return [v for v in versions if v.pk not in heads]


def derived_memories(item: MemoryItem) -> list[MemoryItem]:
    """The memories made from this one (summaries compacted from it, found
    through lineage): where its text also appears, and what a redaction
    erases and derives again."""
    ids = memory_descendants(workspace=item.workspace, memory_ids=[item.pk])
    return list(MemoryItem.objects.filter(pk__in=ids)
                .only("pk", "type", "summary_tier", "content", "lifecycle_status").order_by("pk"))


def derived_rows(items: list[MemoryItem], *, approved_only: bool) -> list[tuple]:
    """(id, kind, excerpt) of each memory; the excerpt withheld where the
    operator may read only approved memories (`visibility`)."""
    return [(item.pk, item.summary_tier or item.type,
             readable_text(item, approved_only=approved_only, text=item.content[:EXCERPT_CHARS]) or HIDDEN_TEXT)
            for item in items]


DERIVED_COLUMNS = ["memory", "kind", "content"]


def _lineage_message(count: int) -> str:
    if not count:
        return ""
    return f" {count} memory(ies) derived from it were erased and are being derived again from what remains."


def _changeable(modeladmin, request, object_id: str) -> MemoryItem:
    """The memory as its change page finds it (404 otherwise), when the operator
    may change it there (403 otherwise)."""
    item = modeladmin.memory_or_404(request, object_id)
    if not modeladmin.has_change_permission(request, item):
        raise PermissionDenied
    return item


def _redactable(modeladmin, request, object_id: str, *, replace: bool) -> MemoryItem:
    """Redacting needs its own permission on top of seeing the memory; replacing
    the live content is a change as well."""
    item = modeladmin.memory_or_404(request, object_id)
    allowed = modeladmin.has_change_permission(request, item) if replace else (
        modeladmin.has_view_or_change_permission(request, item)
    )
    if not (allowed and modeladmin.has_redact_permission(request)):
        raise PermissionDenied
    return item


def restore_view(modeladmin, request, object_id: str, version_id: str):
    item = _changeable(modeladmin, request, object_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    try:
        restored = memory_item_restore(
            workspace=item.workspace, actor=Actor.for_user(request.user.pk), memory_id=item.pk, version_id=version_id
        )
    except DomainError as error:
        modeladmin.message_user(request, f"Not restored: {error.message}", messages.ERROR)
    else:
        number = MemoryVersion.objects.filter(pk=version_id).values_list("version", flat=True).first()
        modeladmin.message_user(
            request, f"Restored version {number} as version {restored.version}.", messages.SUCCESS
        )
    return HttpResponseRedirect(_change_url(modeladmin, object_id))


def redact_version_view(modeladmin, request, object_id: str, version_id: str):
    item = _redactable(modeladmin, request, object_id, replace=False)
    version = MemoryVersion.objects.filter(pk=version_id, memory_id=item.pk, workspace_id=item.workspace_id).first()
    if version is None:
        raise Http404("No such memory version.")
    if request.method == "POST" and request.POST.get("post") == "yes":
        try:
            _version, report = memory_version_redact_following_lineage(
                workspace=item.workspace, version_id=version.pk, actor=Actor.for_user(request.user.pk)
            )
        except DomainError as error:
            modeladmin.message_user(request, f"Not redacted: {error.message}", messages.ERROR)
        else:
            modeladmin.message_user(
                request,
                f"Redacted version {version.version}.{_lineage_message(len(report.memory_ids))}",
                messages.SUCCESS,
            )
        return HttpResponseRedirect(_change_url(modeladmin, object_id))
    return _confirm(
        modeladmin,
        request,
        title=f"Redact version {version.version}",
        question=(
            "Clear this version's content, hash, size and path for good? Who wrote it and when stay. "
            "This cannot be undone."
        ),
        versions=[version] if version.redacted_at is None else [],
        item=item,
        head=version.pk == item.current_version_id,
        derived=derived_memories(item),
    )


def redact_and_replace_view(modeladmin, request, object_id: str):
    item = _redactable(modeladmin, request, object_id, replace=True)
    all_versions = list(
        MemoryVersion.objects.filter(memory_id=item.pk, redacted_at__isnull=True).order_by("version")
    )
    if request.method == "POST":
        form = RedactAndReplaceForm(request.POST)
        if form.is_valid() and form.cleaned_data["confirmed"]:
            actor = Actor.for_user(request.user.pk)
            try:
                _item, done, report = memory_redact_and_replace_following_lineage(
                    workspace=item.workspace,
                    actor=actor,
                    memory_id=item.pk,
                    content=form.cleaned_data["content"],
                    expected_version=form.cleaned_data["expected_version"],
                )
            except DomainError as error:
                form.add_error(None, error.message)
            else:
                modeladmin.message_user(
                    request,
                    f"Replaced the content and redacted {len(done)} earlier version(s)."
                    f"{_lineage_message(len(report.memory_ids))}",
                    messages.SUCCESS,
                )
                return HttpResponseRedirect(_change_url(modeladmin, object_id))
        elif form.is_valid():
            # Second step: show exactly what will be cleared, then ask.
            data = form.cleaned_data.copy()
            data["confirmed"] = True
            form = RedactAndReplaceForm(initial=data)
            return _render_replace(modeladmin, request, item, form, all_versions, confirming=True)
    else:
        form = RedactAndReplaceForm(initial={"expected_version": item.version, "content": ""})
    return _render_replace(modeladmin, request, item, form, all_versions, confirming=False)


def _render_replace(modeladmin, request, item, form, versions, *, confirming: bool):
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": "Redact and replace",
        "opts": modeladmin.opts,
        "original": item,
        "form": form,
        "confirming": confirming,
        "columns": VERSION_COLUMNS,
        "rows": version_rows(versions),
        "derived_columns": DERIVED_COLUMNS,
        "derived_rows": derived_rows(derived_memories(item), approved_only=approved_only(request, item.workspace)),
        "media": modeladmin.media,
    }
    return TemplateResponse(request, "admin/memories/memoryitem/redact_and_replace.html", context)


def _confirm(modeladmin, request, *, title, question, versions, item, head: bool = False, derived=()):
    context = {
        "derived_columns": DERIVED_COLUMNS,
        "derived_rows": derived_rows(list(derived), approved_only=approved_only(request, item.workspace)),
        **modeladmin.admin_site.each_context(request),
        "title": title,
        "question": question,
        "opts": modeladmin.opts,
        "original": item,
        "columns": VERSION_COLUMNS,
        "rows": version_rows(versions),
        "head": head,
        "media": modeladmin.media,
    }
    return TemplateResponse(request, "admin/memories/memoryversion/redact_confirmation.html", context)


def redact_everywhere_view(modeladmin, request):
    """Redact a text across one of the operator's workspaces: messages,
    memories, their versions, derived and rolling summaries. The first step
    shows where the text appears; the second, confirmed, clears it. Needs the
    redact permission and the change permission (live content is rewritten)."""

    if not modeladmin.has_redact_everywhere_permission(request):
        raise PermissionDenied
    workspaces = visible_workspaces(request).order_by("name")
    changelist = reverse(f"admin:memories_{modeladmin.opts.model_name}_changelist")
    found = None
    if request.method == "POST":
        posted = request.POST.get("workspace")
        if posted and not workspaces.filter(pk=posted).exists():
            # Another workspace's id is not a form error: it is not here.
            raise Http404("No such workspace.")
        form = RedactEverywhereForm(request.POST, workspaces=workspaces)
        if form.is_valid():
            workspace, text = form.cleaned_data["workspace"], form.cleaned_data["text"]
            if form.cleaned_data["confirmed"] and request.POST.get("post") == "yes":
                try:
                    result = workspace_text_redact(workspace=workspace, actor=Actor.for_user(request.user.pk), text=text)
                except DomainError as error:
                    modeladmin.message_user(request, f"Not redacted: {error.message}", messages.ERROR)
                else:
                    # The preview's counts, taken again as the redaction
                    # began, and what is left after it: never the text itself
                    # (a message is kept in the session).
                    derived = len(result["derived_ids"])
                    left = result["left"]
                    modeladmin.message_user(
                        request,
                        f"Redacted the text everywhere in {workspace.name}: it was in "
                        f"{places_sentence(result['found'])}"
                        + (f"; {derived} memor{'y' if derived == 1 else 'ies'} derived from what held it erased and "
                           "derived again" if derived else "")
                        + (f". It is still in {places_sentence(left)}." if left else ". None of it is left."),
                        messages.WARNING if left else messages.SUCCESS,
                    )
                return HttpResponseRedirect(changelist)
            occurrences = workspace_text_occurrences(workspace=workspace, text=text, messages=True)
            # The same sets the redaction reports (`workspace_text_redact`).
            derived = sorted({*occurrences.derived_ids, *occurrences.message_derived_ids})
            items = list(
                MemoryItem.objects.filter(pk__in=[*occurrences.memory_ids, *derived])
                .only("pk", "type", "summary_tier", "content", "lifecycle_status").order_by("pk")
            )
            found = {
                "places": text_places(occurrences.columns),
                "sentence": places_sentence(occurrences.columns),
                "derived": len(derived),
                "rows": derived_rows(items, approved_only=approved_only(request, workspace)),
            }
            data = form.cleaned_data.copy()
            data["confirmed"] = True
            data["workspace"] = workspace.pk
            form = RedactEverywhereForm(initial=data, workspaces=workspaces)
    else:
        form = RedactEverywhereForm(workspaces=workspaces)
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": "Redact a text everywhere",
        "opts": modeladmin.opts,
        "form": form,
        "found": found,
        "columns": DERIVED_COLUMNS,
        "media": modeladmin.media,
    }
    return TemplateResponse(request, "admin/memories/memoryitem/redact_everywhere.html", context)
