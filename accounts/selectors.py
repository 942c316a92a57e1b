from __future__ import annotations

import hmac

from django.db.models import QuerySet

from accounts.models import ApiKey, WorkspaceMembership
from accounts.services import hash_key_secret, split_raw_key


def api_key_authenticate(*, raw_key: str) -> ApiKey | None:
    """The active key matching `raw_key`, compared in constant time; None otherwise."""
    parts = split_raw_key(raw_key)
    if parts is None:
        return None
    prefix, _ = parts
    api_key = ApiKey.objects.select_related("workspace").filter(prefix=prefix).first()
    expected = api_key.key_hash if api_key is not None else "0" * 64
    # Compare even when no key matched, so timing does not reveal which prefixes exist.
    matches = hmac.compare_digest(expected, hash_key_secret(raw_key))
    if api_key is None or not matches or api_key.revoked_at is not None:
        return None
    return api_key


def operator_workspace_ids(*, user) -> QuerySet | None:
    """The workspaces a staff user may see in the admin, as a subquery of ids
    (so scoping a list costs no query of its own); None for a superuser, who
    sees every workspace."""
    if user.is_superuser:
        return None
    return WorkspaceMembership.objects.filter(user_id=user.pk).values_list("workspace_id", flat=True)
