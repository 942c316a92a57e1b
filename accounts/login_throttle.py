"""The admin login, throttled: failed attempts are counted per client address
and per username in the shared cache, and past `ADMIN_LOGIN_MAX_FAILURES`
within `ADMIN_LOGIN_WINDOW_SECONDS` further attempts are refused before the
password is even checked, so guessing costs a window per few tries from any
number of addresses against one account, and from one address against any
number of accounts.

The client address is the connection's, or the one `TRUSTED_PROXY_COUNT`
hops from the right of X-Forwarded-For (DRF's own reading of `NUM_PROXIES`),
so a client cannot choose the address it is counted under.
"""

from __future__ import annotations

import hashlib
import time

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.cache import cache
from django.core.exceptions import ValidationError
from rest_framework.throttling import BaseThrottle

from accounts.throttling import window_hit


def client_address(request) -> str:
    """The client's address under the trusted-proxy setting."""
    return BaseThrottle().get_ident(request)


def _counters(request, username: str) -> list[str]:
    window = int(time.time() // settings.ADMIN_LOGIN_WINDOW_SECONDS)
    # Hashed: a username is whatever was typed, of any length.
    user = hashlib.sha256(username.strip().lower().encode()).hexdigest()
    return [f"admin_login_addr_{client_address(request)}_{window}", f"admin_login_user_{user}_{window}"]


class ThrottledAdminAuthenticationForm(AdminAuthenticationForm):
    error_messages = {
        **AdminAuthenticationForm.error_messages,
        "throttled": "Too many failed logins from this address or for this account. Try again later.",
    }

    def clean(self):
        counters = _counters(self.request, self.data.get("username") or "")
        found = cache.get_many(counters)
        if any(int(found.get(name) or 0) >= settings.ADMIN_LOGIN_MAX_FAILURES for name in counters):
            raise ValidationError(self.error_messages["throttled"], code="throttled")
        try:
            return super().clean()
        except ValidationError:
            for name in counters:
                window_hit(name, settings.ADMIN_LOGIN_WINDOW_SECONDS + 1)
            raise
