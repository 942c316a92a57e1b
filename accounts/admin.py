from urllib.parse import urlencode

from django.contrib import admin, messages
from django.db.models import Count, Q
from django.urls import reverse
from django.utils.html import format_html

from accounts.models import ApiKey, Workspace
from accounts.services import api_key_revoke


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
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
