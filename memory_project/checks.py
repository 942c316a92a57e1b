"""Deploy checks of this service's own (`manage.py check --deploy`)."""

from __future__ import annotations

from django.conf import settings
from django.core import checks

# Django's own check (security.W009) only warns, and accepts any long string:
# the placeholder `.env.example` ships with is long and public.
MIN_SECRET_KEY_CHARS = 50
MIN_SECRET_KEY_UNIQUE_CHARS = 5
PLACEHOLDER_MARKS = ("change-me", "changeme", "replace-me", "placeholder", "django-insecure-", "secret-key")


@checks.register(checks.Tags.security, deploy=True)
def secret_key_check(app_configs, **kwargs) -> list[checks.CheckMessage]:
    key = str(settings.SECRET_KEY or "")
    lowered = key.lower()
    if any(mark in lowered for mark in PLACEHOLDER_MARKS):
        return [checks.Error(
            "SECRET_KEY is a placeholder (it is public, in .env.example or documentation): anyone can forge "
            "the admin's sessions and signed values.",
            hint="Set SECRET_KEY to a random value of at least 50 characters, e.g. "
                 "python -c 'import secrets; print(secrets.token_urlsafe(50))'.",
            id="memory.E001",
        )]
    if len(key) < MIN_SECRET_KEY_CHARS or len(set(key)) < MIN_SECRET_KEY_UNIQUE_CHARS:
        return [checks.Error(
            f"SECRET_KEY is too short or too simple (at least {MIN_SECRET_KEY_CHARS} characters, "
            f"{MIN_SECRET_KEY_UNIQUE_CHARS} distinct).",
            hint="Set SECRET_KEY to a random value of at least 50 characters.",
            id="memory.E002",
        )]
    return []
