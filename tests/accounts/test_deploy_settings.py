"""Production settings: `check --deploy` is clean with `.env.example`, and
responses carry the security headers; the admin's cookies are secure."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

BASE_DIR = Path(__file__).resolve().parents[2]


def _production_env(tmp_path) -> dict[str, str]:
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    for line in (BASE_DIR / ".env.example").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        env[key.strip()] = value.strip()
    env["MEMORY_VAR_DIR"] = str(tmp_path)
    # The example's placeholder is public; a deployment brings its own secret.
    env["SECRET_KEY"] = secrets.token_urlsafe(50)
    return env


def _manage(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean_with_the_example_environment(tmp_path):
    env = _production_env(tmp_path)
    assert "DATABASE_URL" in env and "SECRET_KEY" in env
    result = _manage(env, "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_has_no_security_warnings(tmp_path):
    """The security part of the deploy checks on its own (the schema
    generator's warnings are checked by the test above)."""
    env = _production_env(tmp_path)
    result = _manage(env, "check", "--deploy", "--tag", "security", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "security.W" not in result.stdout + result.stderr


@pytest.mark.slow
def test_production_settings_are_secure(tmp_path):
    env = _production_env(tmp_path)
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        "print(json.dumps({k: getattr(s, k) for k in ['DEBUG', 'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', "
        "'SESSION_COOKIE_HTTPONLY', 'SECURE_SSL_REDIRECT', 'SECURE_HSTS_SECONDS', 'SECURE_CONTENT_TYPE_NOSNIFF', "
        "'X_FRAME_OPTIONS', 'SECURE_PROXY_SSL_HEADER']}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=BASE_DIR,
        env={**env, "DJANGO_SETTINGS_MODULE": "memory_project.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    import json

    values = json.loads(result.stdout.strip().splitlines()[-1])
    assert values["DEBUG"] is False
    assert values["SESSION_COOKIE_SECURE"] and values["CSRF_COOKIE_SECURE"] and values["SESSION_COOKIE_HTTPONLY"]
    assert values["SECURE_SSL_REDIRECT"] and values["SECURE_HSTS_SECONDS"] >= 31536000
    assert values["SECURE_CONTENT_TYPE_NOSNIFF"] and values["X_FRAME_OPTIONS"] == "DENY"
    assert values["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]


@pytest.mark.parametrize("secret", ["example", "short-but-random-Zq81x", "x" * 60, "placeholder"])
def test_check_deploy_fails_on_the_placeholder_or_a_weak_secret(tmp_path, secret):
    env = _production_env(tmp_path)
    if secret == "placeholder":
        secret = next(line.partition("=")[2] for line in (BASE_DIR / ".env.example").read_text().splitlines()
                      if line.startswith("SECRET_KEY="))
    env["SECRET_KEY"] = secret
    result = _manage(env, "check", "--deploy")
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr and ("memory.E001" in result.stderr or "memory.E002" in result.stderr)


def test_production_refuses_to_start_without_a_secret(tmp_path):
    env = _production_env(tmp_path)
    del env["SECRET_KEY"]
    result = _manage(env, "check")
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


@pytest.mark.django_db
def test_security_headers_on_api_and_admin_responses(client):
    for url in ("/healthz", "/v1/schema/", "/admin/login/", "/v1/no-such-route"):
        response = client.get(url)
        assert response["X-Content-Type-Options"] == "nosniff", url
        assert response["X-Frame-Options"] == "DENY", url
        assert response["Referrer-Policy"] == "same-origin", url
        assert response["Cross-Origin-Opener-Policy"] == "same-origin", url


@pytest.mark.django_db
def test_hsts_and_https_redirect_when_configured(settings):
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    settings.SECURE_SSL_REDIRECT = True
    client = Client()
    response = client.get("/v1/schema/")
    assert response.status_code == 301 and response["Location"].startswith("https://")
    # The health check stays reachable over plain HTTP for load balancers.
    assert client.get("/healthz").status_code == 200
    secure = client.get("/v1/schema/", secure=True)
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"


@pytest.mark.django_db
def test_admin_uses_secure_cookies_and_csrf(settings):
    settings.SESSION_COOKIE_SECURE = True
    settings.CSRF_COOKIE_SECURE = True
    get_user_model().objects.create_superuser("ops", "ops@example.com", "a-long-password-123")
    client = Client(enforce_csrf_checks=True)

    login_page = client.get("/admin/login/", secure=True)
    csrf_cookie = login_page.cookies["csrftoken"]
    assert csrf_cookie["secure"] and csrf_cookie["samesite"] == "Lax"

    # Without the token the login is refused outright.
    refused = client.post("/admin/login/", {"username": "ops", "password": "a-long-password-123"}, secure=True)
    assert refused.status_code == 403
    assert "sessionid" not in refused.cookies

    token = csrf_cookie.value
    accepted = client.post(
        "/admin/login/?next=/admin/",
        {"username": "ops", "password": "a-long-password-123", "csrfmiddlewaretoken": token},
        secure=True,
        HTTP_REFERER="https://testserver/admin/login/",
    )
    assert accepted.status_code == 302, accepted.content[:500]
    session_cookie = accepted.cookies["sessionid"]
    assert session_cookie["secure"] and session_cookie["httponly"]
