from urllib.parse import urlencode

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.db.models import Count, Q
from django.urls import reverse
from django.utils.html import format_html

from accounts.admin_scope import WorkspaceScopedAdmin
from accounts.login_throttle import ThrottledAdminAuthenticationForm
from accounts.models import ApiKey, Workspace, WorkspaceMembership
from accounts.services import api_key_revoke, workspace_membership_add


@admin.register(Workspace)
class WorkspaceAdmin(WorkspaceScopedAdmin, admin.ModelAdmin):
    workspace_path = ""
    list_display = ["name", "slug", "id", "requires_review", "pending_review", "created_at"]
    list_filter = ["requires_review"]
    search_fields = ["name", "slug", "id"]
    readonly_fields = ["id", "created_at"]

    def get_queryset(self, request):
        # One grouped count for the whole page rather than one per row.
        return super().get_queryset(request).annotate(
            pending_count=Count("memory_items", filter=Q(memory_items__lifecycle_status="pending"))
        )

    @admin.display(description="pending memories", ordering="pending_count")
    def pending_review(self, obj) -> str:
        count = getattr(obj, "pending_count", 0)
        if not count:
            return "0"
        url = reverse("admin:memories_memoryitem_changelist")
        query = urlencode({"workspace__id__exact": obj.pk, "lifecycle_status__exact": "pending"})
        return format_html('<a href="{}?{}">{}</a>', url, query, count)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if not change and not request.user.is_superuser:
            # An operator who creates a workspace works in it.
            workspace_membership_add(user=request.user, workspace=obj)


@admin.register(ApiKey)
class ApiKeyAdmin(WorkspaceScopedAdmin, admin.ModelAdmin):
    list_display = ["name", "prefix", "workspace", "read_only", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["read_only", ("revoked_at", admin.EmptyFieldListFilter), "workspace"]
    search_fields = ["name", "prefix", "id"]
    list_select_related = ["workspace"]
    # The hash is never shown; keys are created with `manage.py create_api_key`,
    # which prints the secret once. A key belongs to its workspace for good.
    fields = ["id", "workspace", "name", "prefix", "read_only", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["id", "workspace", "prefix", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke_keys"]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description="Revoke selected API keys")
    def revoke_keys(self, request, queryset):
        revoked = skipped = 0
        for api_key in queryset:
            if api_key.revoked_at is not None:
                skipped += 1
                continue
            api_key_revoke(api_key=api_key)
            revoked += 1
        self.message_user(request, f"Revoked {revoked} key(s); {skipped} already revoked.", messages.SUCCESS)


@admin.register(WorkspaceMembership)
class WorkspaceMembershipAdmin(WorkspaceScopedAdmin, admin.ModelAdmin):
    list_display = ["user", "workspace", "created_at"]
    list_filter = ["workspace"]
    search_fields = ["user__username", "user__email", "workspace__name", "workspace__slug"]
    list_select_related = ["user", "workspace"]
    autocomplete_fields = ["workspace"]
    fields = ["user", "workspace", "created_at"]
    readonly_fields = ["created_at"]

    def get_readonly_fields(self, request, obj=None):
        # A membership is added or removed, never moved to another user or workspace.
        return ["user", "workspace", "created_at"] if obj is not None else self.readonly_fields

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user":
            kwargs["queryset"] = db_field.related_model._default_manager.filter(is_staff=True, is_active=True)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        if not change:
            created = workspace_membership_add(user=form.cleaned_data["user"], workspace=form.cleaned_data["workspace"])
            obj.pk = created.pk


# --- Users and groups: superusers only ---------------------------------------------
# A staff user holding the stock auth permissions could otherwise edit their
# own account (make it a superuser, grant it any permission, put it in any
# group) or another operator's: accounts and groups are the installation's,
# not a workspace's, so only superusers manage them.


class SuperuserOnlyAdmin:
    def has_module_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_add_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_change_permission(self, request, obj=None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_delete_permission(self, request, obj=None) -> bool:
        return request.user.is_active and request.user.is_superuser


class SuperuserUserAdmin(SuperuserOnlyAdmin, UserAdmin):
    pass


class SuperuserGroupAdmin(SuperuserOnlyAdmin, GroupAdmin):
    pass


for _model, _admin in ((get_user_model(), SuperuserUserAdmin), (Group, SuperuserGroupAdmin)):
    if admin.site.is_registered(_model):
        admin.site.unregister(_model)
    admin.site.register(_model, _admin)

admin.site.login_form = ThrottledAdminAuthenticationForm
