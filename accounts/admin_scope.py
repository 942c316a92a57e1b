"""Operators see only their workspaces in the admin console.

`WorkspaceScopedAdmin` goes first in a ModelAdmin's bases. It narrows the one
queryset every page starts from (`get_queryset`: the changelist, change,
delete and history pages, actions, autocomplete, and the custom pages that
fetch through `get_object`), the object permissions, the workspace filter's
choices and the choices of foreign-key fields. A superuser sees everything.

Another workspace's object answers 404 like a missing one, never a redirect
that says it exists; an action the operator may not run answers 403.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin import helpers
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Model, Q, QuerySet
from django.http import Http404

from accounts.models import Workspace
from accounts.selectors import operator_workspace_ids

_CACHE_ATTR = "_operator_workspace_ids"


def member_workspace_ids(request) -> set[str] | None:
    """The request user's workspace ids (one query, then cached on the request);
    None for a superuser."""
    if request.user.is_superuser:
        return None
    if not hasattr(request, _CACHE_ATTR):
        setattr(request, _CACHE_ATTR, set(operator_workspace_ids(user=request.user)))
    return getattr(request, _CACHE_ATTR)


def scope_queryset(queryset: QuerySet, request, path: str = "workspace") -> QuerySet:
    """`queryset` limited to the request user's workspaces; `path` leads from its
    model to the workspace ("" when the model is the workspace)."""
    ids = operator_workspace_ids(user=request.user)
    if ids is None:
        return queryset
    return queryset.filter(**{f"{path}__in" if path else "pk__in": ids})


def visible_workspaces(request) -> QuerySet[Workspace]:
    return scope_queryset(Workspace.objects.all(), request, "")


class MemberWorkspaceFilter(admin.RelatedFieldListFilter):
    """The stock workspace filter, offering only the operator's workspaces."""

    def field_choices(self, field, request, model_admin):
        ordering = self.field_admin_ordering(field, request, model_admin)
        ids = operator_workspace_ids(user=request.user)
        limit = None if ids is None else Q(pk__in=ids)
        return field.get_choices(include_blank=False, ordering=ordering, limit_choices_to=limit)


class WorkspaceScopedAdmin:
    """See the module docstring. `workspace_path`: the lookup from the model to
    its workspace ("" for the workspace itself)."""

    workspace_path = "workspace"

    def get_queryset(self, request):
        return scope_queryset(super().get_queryset(request), request, self.workspace_path)

    def workspace_id_of(self, obj: Model) -> str | None:
        if not self.workspace_path:
            return obj.pk
        *hops, last = self.workspace_path.split("__")
        for hop in hops:
            obj = getattr(obj, hop, None)
            if obj is None:
                return None
        return getattr(obj, f"{last}_id", None)

    def in_scope(self, request, obj: Model | None) -> bool:
        if obj is None:
            return True
        ids = member_workspace_ids(request)
        return ids is None or self.workspace_id_of(obj) in ids

    def has_view_permission(self, request, obj=None):
        return super().has_view_permission(request, obj) and self.in_scope(request, obj)

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self.in_scope(request, obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self.in_scope(request, obj)

    def _get_obj_does_not_exist_redirect(self, request, opts, object_id):
        # The stock redirect to the index would say "no such object" for a
        # missing id and differ for a foreign one; both are simply not here.
        raise Http404(f"No {opts.verbose_name} with this id.")

    def get_list_filter(self, request):
        filters = []
        for entry in super().get_list_filter(request):
            if isinstance(entry, str) and self._is_workspace_field(entry):
                entry = (entry, MemberWorkspaceFilter)
            filters.append(entry)
        return filters

    def _is_workspace_field(self, path: str) -> bool:
        model = self.model
        field = None
        for name in path.split("__"):
            try:
                field = model._meta.get_field(name)
            except FieldDoesNotExist:
                return False
            model = field.related_model
            if model is None:
                return False
        return field is not None and field.related_model is Workspace

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        related = db_field.related_model
        if "queryset" not in kwargs:
            if related is Workspace:
                kwargs["queryset"] = visible_workspaces(request)
            elif any(field.name == "workspace" for field in related._meta.fields):
                kwargs["queryset"] = scope_queryset(related._default_manager.all(), request)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def changelist_view(self, request, extra_context=None):
        if request.method == "POST" and "index" in request.POST and "_save" not in request.POST:
            self._check_action_post(request)
        return super().changelist_view(request, extra_context)

    def _check_action_post(self, request) -> None:
        """Refuse an action the operator may not run (403) or rows of other
        workspaces (404) instead of quietly doing nothing. (Rows of their own
        that left this page's queryset meanwhile are skipped, as usual.)"""
        names = request.POST.getlist("action")
        try:
            name = names[int(request.POST.get("index", 0))]
        except (IndexError, ValueError):
            name = None
        if name and name not in self.get_actions(request) and self._declares_action(name):
            raise PermissionDenied
        selected = request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)
        if selected and not request.user.is_superuser:
            try:
                rows = self.model._default_manager.filter(pk__in=selected)
                foreign = rows.exclude(pk__in=scope_queryset(rows, request, self.workspace_path).values("pk")).exists()
            except (ValueError, DjangoValidationError) as exc:
                raise Http404("No such rows.") from exc
            if foreign:
                raise Http404("No such rows.")

    def _declares_action(self, name: str) -> bool:
        declared = {getattr(action, "__name__", action) for action in self.actions or ()}
        return name in declared or name in dict(self.admin_site.actions)
