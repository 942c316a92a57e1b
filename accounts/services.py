"""Writes for workspaces and API keys."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from accounts.models import ApiKey, Workspace, WorkspaceMembership
from memory_project.errors import ValidationError

KEY_SCHEME = "mk"
PREFIX_LENGTH = 12


def hash_key_secret(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode("utf-8")).hexdigest()


def split_raw_key(raw_key: str) -> tuple[str, str] | None:
    """`mk_<prefix>_<secret>` -> (prefix, secret), or None when malformed."""
    parts = raw_key.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_SCHEME or len(parts[1]) != PREFIX_LENGTH or not parts[2]:
        return None
    return parts[1], parts[2]


@dataclass(frozen=True)
class CreatedApiKey:
    api_key: ApiKey
    raw_key: str  # shown once, never stored


def workspace_create(*, name: str, slug: str | None = None, requires_review: bool = False) -> Workspace:
    name = name.strip()
    if not name:
        raise ValidationError("name: must not be empty.")
    slug = slugify(slug or name)[:100] or "workspace"
    with transaction.atomic():
        if Workspace.objects.filter(slug=slug).exists():
            raise ValidationError(f"slug: a workspace with slug '{slug}' already exists.")
        return Workspace.objects.create(name=name, slug=slug, requires_review=requires_review)


def api_key_create(*, workspace: Workspace, name: str, read_only: bool = False) -> CreatedApiKey:
    prefix = secrets.token_hex(PREFIX_LENGTH // 2)
    raw_key = f"{KEY_SCHEME}_{prefix}_{secrets.token_urlsafe(32)}"
    with transaction.atomic():
        api_key = ApiKey.objects.create(
            workspace=workspace,
            name=name.strip() or "key",
            prefix=prefix,
            key_hash=hash_key_secret(raw_key),
            read_only=read_only,
        )
    return CreatedApiKey(api_key=api_key, raw_key=raw_key)


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    with transaction.atomic():
        if api_key.revoked_at is None:
            api_key.revoked_at = timezone.now()
            api_key.save(update_fields=["revoked_at"])
    return api_key


def workspace_membership_add(*, user, workspace: Workspace) -> WorkspaceMembership:
    """Give a staff user access to a workspace in the admin (idempotent)."""
    if not user.is_staff:
        raise ValidationError("user: only staff users work in the admin console.")
    with transaction.atomic():
        membership, _created = WorkspaceMembership.objects.get_or_create(user=user, workspace=workspace)
    return membership
