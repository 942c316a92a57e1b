"""The admin login is throttled per address and per username; a forwarded
header is trusted only behind as many proxies as configured; the User and
Group admin belongs to superusers, so a staff user cannot grant themselves
anything."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

from accounts.throttling import AuthFailureThrottle

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-password-123"


@pytest.fixture(autouse=True)
def _own_cache(settings, tmp_path):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.ADMIN_LOGIN_MAX_FAILURES = 3
    settings.ADMIN_LOGIN_WINDOW_SECONDS = 3600
    # A cache of this test's own: other tests running beside it clear theirs.
    settings.CACHES = {"default": {"BACKEND": "diskcache.DjangoCache", "LOCATION": str(tmp_path / "cache")}}
    yield
    cache.clear()


def _login(username: str, password: str, address: str = "10.1.1.1", **headers):
    return Client(REMOTE_ADDR=address, **headers).post(
        "/admin/login/?next=/admin/", {"username": username, "password": password})


def _logged_in(response) -> bool:
    return response.status_code == 302 and "sessionid" in response.cookies


def test_admin_login_is_throttled_per_username_across_addresses():
    get_user_model().objects.create_superuser("ops", "ops@example.com", PASSWORD)
    for attempt in range(3):
        assert _login("ops", "wrong", address=f"10.2.0.{attempt}").status_code == 200
    refused = _login("ops", PASSWORD, address="10.2.0.99")
    assert not _logged_in(refused)
    assert b"Too many failed logins" in refused.content
    # Another account is not held back by these failures.
    get_user_model().objects.create_superuser("other", "other@example.com", PASSWORD)
    assert _logged_in(_login("other", PASSWORD, address="10.2.0.50"))


def test_admin_login_is_throttled_per_address_across_usernames():
    get_user_model().objects.create_superuser("ops", "ops@example.com", PASSWORD)
    for name in ("a", "b", "c"):
        _login(name, "wrong", address="10.3.0.1")
    assert not _logged_in(_login("ops", PASSWORD, address="10.3.0.1"))
    assert _logged_in(_login("ops", PASSWORD, address="10.3.0.2"))


def test_a_forwarded_header_does_not_choose_the_login_address():
    get_user_model().objects.create_superuser("ops", "ops@example.com", PASSWORD)
    for attempt in range(3):
        _login(f"guess{attempt}", "wrong", HTTP_X_FORWARDED_FOR=f"192.0.2.{attempt}")
    assert not _logged_in(_login("ops", PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.200"))


@pytest.fixture
def tight_failure_limit(monkeypatch):
    monkeypatch.setattr(AuthFailureThrottle, "rate", "3/min", raising=False)


def test_varying_x_forwarded_for_does_not_escape_the_failure_throttle(tight_failure_limit):
    statuses = [
        APIClient(REMOTE_ADDR="10.4.0.1", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}").get("/v1/memories").status_code
        for n in range(5)
    ]
    assert statuses == [401, 401, 401, 429, 429]


def test_behind_a_trusted_proxy_the_forwarded_client_is_counted(tight_failure_limit, settings):
    from rest_framework.settings import api_settings

    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    api_settings.reload()
    try:
        statuses = [
            APIClient(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=f"spoofed, 198.51.100.{n % 2}")
            .get("/v1/memories").status_code
            for n in range(8)
        ]
    finally:
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 0}
        api_settings.reload()
    # Two clients behind the proxy, each with its own window of 3; the
    # spoofed leftmost entry is ignored.
    assert statuses == [401] * 6 + [429, 429]


def test_the_default_trusts_no_forwarded_header():
    from rest_framework.settings import api_settings

    assert api_settings.NUM_PROXIES == 0


@pytest.fixture
def staff_client():
    user = get_user_model().objects.create_user("staff", "staff@example.com", PASSWORD, is_staff=True)
    # Even holding every stock auth permission, a staff user is refused.
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="auth"))
    client = Client()
    client.force_login(user)
    return client, user


def test_staff_cannot_see_or_change_users_and_groups(staff_client):
    client, user = staff_client
    group = Group.objects.create(name="admins")
    user_model = get_user_model()
    for url in ("/admin/auth/user/", f"/admin/auth/user/{user.pk}/change/", "/admin/auth/group/",
                f"/admin/auth/group/{group.pk}/change/", "/admin/auth/user/add/", "/admin/auth/group/add/"):
        assert client.get(url).status_code in (403, 302), url
    response = client.post(f"/admin/auth/user/{user.pk}/change/", {
        "username": "staff", "is_staff": "on", "is_active": "on", "is_superuser": "on",
        "groups": [group.pk], "user_permissions": list(Permission.objects.values_list("pk", flat=True)),
        "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00",
    })
    assert response.status_code in (403, 302)
    user = user_model.objects.get(pk=user.pk)
    assert not user.is_superuser and not user.groups.exists()
    assert user.user_permissions.filter(content_type__app_label="memories").count() == 0
    index = client.get("/admin/")
    assert b"/admin/auth/user/" not in index.content and b"/admin/auth/group/" not in index.content


def test_a_superuser_still_manages_users(admin_client):
    assert admin_client.get("/admin/auth/user/").status_code == 200
    assert admin_client.get("/admin/auth/group/").status_code == 200
