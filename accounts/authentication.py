"""DRF authentication by API key: `Authorization: Bearer <key>` or `x-api-key: <key>`.

The second form is what the official `anthropic` SDK sends, so the memory-store
endpoints work with `Anthropic(api_key=..., base_url=...)` unchanged.
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from accounts.models import ApiKey
from accounts.selectors import api_key_authenticate, api_key_cache_refresh
from accounts.throttling import AuthFailureThrottle

# `last_used_at` is a hint for operators, not an audit log: writing it on every
# request would turn each read into a write, so it is refreshed at most this often.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def request_raw_key(request) -> str | None:
    """The key a request presents (`Authorization: Bearer <key>` or
    `x-api-key: <key>`); None without one. A malformed Authorization header
    raises `AuthenticationFailed`."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise exceptions.AuthenticationFailed("Authorization header must be 'Bearer <key>'.")
        return value.strip()
    value = request.META.get("HTTP_X_API_KEY", "")
    return value.strip() or None


class ApiKeyAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        try:
            raw_key = request_raw_key(request)
        except exceptions.AuthenticationFailed:
            AuthFailureThrottle().check(request)
            raise
        if raw_key is None:
            # Answered 401 by the permission check; counted as a failure here.
            AuthFailureThrottle().check(request)
            return None
        api_key = api_key_authenticate(raw_key=raw_key)
        if api_key is None:
            AuthFailureThrottle().check(request)
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
        now = timezone.now()
        if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USED_RESOLUTION:
            ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
            api_key.last_used_at = now
            # The cached row carries the new time, so other requests skip the write.
            api_key_cache_refresh(api_key)
        return (None, api_key)

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.ApiKeyAuthentication"
    name = "ApiKeyAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer"}
