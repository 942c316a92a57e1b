from __future__ import annotations

from rest_framework import exceptions, permissions

from accounts.models import ApiKey


class HasWorkspaceKey(permissions.BasePermission):
    """A valid key is required; a read-only key may only use safe methods.

    Routes whose POST only reads (context assembly, search-style tool calls) set
    `read_only_safe_actions` on the view to the action names that stay allowed.
    """

    def has_permission(self, request, view) -> bool:
        api_key = request.auth
        if not isinstance(api_key, ApiKey):
            raise exceptions.NotAuthenticated("An API key is required: 'Authorization: Bearer <key>' or 'x-api-key'.")
        if api_key.read_only and request.method not in permissions.SAFE_METHODS:
            allowed = getattr(view, "read_only_safe_actions", ())
            if getattr(view, "action", None) not in allowed:
                raise exceptions.PermissionDenied("This API key is read-only.")
        return True
