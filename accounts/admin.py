from django.contrib import admin, messages

from accounts.models import ApiKey, Workspace
from accounts.services import api_key_revoke


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "id", "requires_review", "created_at"]
    list_filter = ["requires_review"]
    search_fields = ["name", "slug", "id"]
    readonly_fields = ["id", "created_at"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "workspace", "read_only", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["read_only", ("revoked_at", admin.EmptyFieldListFilter), "workspace"]
    search_fields = ["name", "prefix", "id"]
    list_select_related = ["workspace"]
    autocomplete_fields = ["workspace"]
    # The hash is never shown; keys are created with `manage.py create_api_key`,
    # which prints the secret once.
    fields = ["id", "workspace", "name", "prefix", "read_only", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["id", "prefix", "created_at", "last_used_at", "revoked_at"]
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
