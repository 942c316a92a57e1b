from __future__ import annotations

from rest_framework.throttling import SimpleRateThrottle

from accounts.models import ApiKey


class ApiKeyRateThrottle(SimpleRateThrottle):
    """Requests per API key; the cache (Redis in production) holds the window."""

    scope = "api_key"

    def get_cache_key(self, request, view):
        api_key = request.auth
        if not isinstance(api_key, ApiKey):
            return None
        return self.cache_format % {"scope": self.scope, "ident": api_key.pk}
