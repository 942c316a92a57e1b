"""Memory stores: a store's documents browsed as a path tree (one folder at a
time, so a large store costs one bounded query per page), with their versions."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.db.models import Count, Sum
from django.http import HttpResponseRedirect
from django.urls import reverse

from accounts.admin_scope import WorkspaceScopedAdmin
from memories.admin.logging import ContentFreeLogMixin
from memories.admin.outcomes import Outcome, confirmation_page
from memories.models import MemoryItem, MemoryStore, MemoryVersion
from memories.services.stores import memory_store_archive, memory_store_create, memory_store_delete, memory_store_update
from memory_project.errors import DomainError

# A folder listing reads at most this many paths; deeper browsing narrows it.
MAX_TREE_ROWS = 5000
RECENT_VERSIONS = 20


@dataclass
class Folder:
    name: str
    prefix: str
    documents: int


@dataclass
class Document:
    item: MemoryItem
    name: str
    versions: int


def _normalize_prefix(prefix: str) -> str:
    prefix = (prefix or "/").strip()
    if not prefix.startswith("/"):
        prefix = "/" + prefix
    if not prefix.endswith("/"):
        prefix += "/"
    return prefix


def store_tree(store: MemoryStore, prefix: str) -> tuple[list[Folder], list[Document], bool]:
    """The folders and documents directly under `prefix`; True when truncated."""
    rows = list(
        MemoryItem.objects.filter(store=store, path__startswith=prefix)
        .order_by("path")
        .only("id", "path", "version", "content_size_bytes", "lifecycle_status", "status", "updated_at", "type")[
            : MAX_TREE_ROWS + 1
        ]
    )
    truncated = len(rows) > MAX_TREE_ROWS
    rows = rows[:MAX_TREE_ROWS]
    folders: dict[str, int] = {}
    documents: list[MemoryItem] = []
    for item in rows:
        rest = item.path[len(prefix) :]
        head, sep, _tail = rest.partition("/")
        if sep:
            folders[head] = folders.get(head, 0) + 1
        else:
            documents.append(item)
    counts = dict(
        MemoryVersion.objects.filter(memory_id__in=[d.pk for d in documents])
        .values("memory_id")
        .annotate(n=Count("id"))
        .values_list("memory_id", "n")
    )
    return (
        [Folder(name, f"{prefix}{name}/", n) for name, n in sorted(folders.items())],
        [Document(item, item.path[len(prefix) :], counts.get(item.pk, 0)) for item in documents],
        truncated,
    )


class MemoryStoreForm(forms.ModelForm):
    class Meta:
        model = MemoryStore
        fields = ["workspace", "name", "description", "metadata"]


@admin.register(MemoryStore)
class MemoryStoreAdmin(WorkspaceScopedAdmin, ContentFreeLogMixin, admin.ModelAdmin):
    form = MemoryStoreForm
    list_display = ["name", "id", "workspace", "entries", "size", "archived_at", "created_at"]
    list_filter = ["workspace", ("archived_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "=id", "description"]
    list_select_related = ["workspace"]
    autocomplete_fields = ["workspace"]
    readonly_fields = ["id", "created_at", "updated_at", "archived_at"]
    actions = ["archive_stores", "delete_stores"]
    change_form_template = "admin/memories/memorystore/change_form.html"

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        match = getattr(request, "resolver_match", None)
        if match is not None and (match.url_name or "").endswith("_changelist"):
            queryset = queryset.annotate(entry_count=Count("memories"), total_size=Sum("memories__content_size_bytes"))
        return queryset

    def get_readonly_fields(self, request, obj=None):
        if obj is not None:
            return [*self.readonly_fields, "workspace"]
        return self.readonly_fields

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    @admin.display(description="documents", ordering="entry_count")
    def entries(self, obj) -> int:
        return obj.entry_count

    @admin.display(description="size", ordering="total_size")
    def size(self, obj) -> str:
        return f"{obj.total_size or 0} B"

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if change:
            changed = set(form.changed_data)
            metadata = None
            if "metadata" in changed:
                # The service merges; keys the operator removed are sent as null.
                old = form.initial.get("metadata") or {}
                metadata = {**{key: None for key in old if key not in data["metadata"]}, **data["metadata"]}
            memory_store_update(
                workspace=obj.workspace,
                store_id=obj.pk,
                name=data["name"] if "name" in changed else None,
                description=data["description"] if "description" in changed else None,
                metadata=metadata,
            )
            return
        created = memory_store_create(
            workspace=data["workspace"], name=data["name"], description=data["description"], metadata=data["metadata"]
        )
        obj.pk = created.pk

    def delete_model(self, request, obj):
        memory_store_delete(workspace=obj.workspace, store_id=obj.pk)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except DomainError as error:
            self.message_user(request, f"Not saved: {error.message}", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        store = self.get_object(request, unquote(object_id))
        if store is not None and self.has_view_or_change_permission(request, store):
            prefix = _normalize_prefix(request.GET.get("prefix", "/"))
            folders, documents, truncated = store_tree(store, prefix)
            crumbs = []
            walked = "/"
            for part in [p for p in prefix.split("/") if p]:
                walked += part + "/"
                crumbs.append((part, walked))
            extra_context.update(
                store=store,
                tree_prefix=prefix,
                tree_crumbs=crumbs,
                tree_folders=folders,
                tree_documents=documents,
                tree_truncated=truncated,
                tree_limit=MAX_TREE_ROWS,
                recent_versions=list(
                    MemoryVersion.objects.filter(store=store).defer("content", "attributes").order_by("-created_at")[
                        :RECENT_VERSIONS
                    ]
                ),
                versions_url=reverse("admin:memories_memoryversion_changelist"),
                memories_url=reverse("admin:memories_memoryitem_changelist") + "?" + urlencode({"store_id": store.pk}),
            )
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.action(description="Archive selected stores", permissions=["change"])
    def archive_stores(self, request, queryset):
        outcome = Outcome("Archive")
        for store in queryset.select_related("workspace"):
            if store.archived_at is not None:
                outcome.skipped += 1
                continue
            outcome.attempt(memory_store_archive, workspace=store.workspace, store_id=store.pk)
        outcome.report(self, request)

    @admin.action(description="Delete selected stores and their documents…", permissions=["delete"])
    def delete_stores(self, request, queryset):
        if request.POST.get("post") != "yes":
            stats = queryset.select_related("workspace").annotate(entry_count=Count("memories"))
            rows = [(s.name, s.pk, s.workspace.name, f"{s.entry_count} document(s)") for s in stats]
            return confirmation_page(
                self,
                request,
                queryset,
                action="delete_stores",
                title="Delete memory stores",
                question="Delete these stores with all their documents and versions? This cannot be undone.",
                rows=rows,
                extra={"columns": ["store", "id", "workspace", "documents"]},
            )
        outcome = Outcome("Delete")
        for store in queryset.select_related("workspace"):
            outcome.attempt(memory_store_delete, workspace=store.workspace, store_id=store.pk)
        outcome.report(self, request)
        return None


