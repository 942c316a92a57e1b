from __future__ import annotations

import hmac
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.db.models import QuerySet

from accounts.models import ApiKey, WorkspaceMembership
from accounts.services import hash_key_secret, split_raw_key


def api_key_cache_key(prefix: str) -> str:
    return f"api_key:{prefix}"


def api_key_changed_key(prefix: str) -> str:
    return f"api_key_changed:{prefix}"


@dataclass(frozen=True)
class CachedKey:
    """A key row as read from the database at `read_at` (epoch seconds);
    `api_key` is None for a prefix no key has."""

    read_at: float
    api_key: ApiKey | None


def _cached_key(prefix: str) -> CachedKey:
    """The key's row from the shared cache, read again from the database
    when missing or older than the last change to the key or its workspace.
    One cache round trip (the row and the change time together)."""
    entry_key, changed_key = api_key_cache_key(prefix), api_key_changed_key(prefix)
    found = cache.get_many([entry_key, changed_key])
    entry, changed_at = found.get(entry_key), found.get(changed_key)
    if not (isinstance(entry, CachedKey) and (changed_at is None or changed_at < entry.read_at)):
        # Taken before the read: a change committed after it marks this row stale.
        read_at = time.time()
        entry = CachedKey(read_at, ApiKey.objects.select_related("workspace").filter(prefix=prefix).first())
        cache.set(entry_key, entry, settings.API_KEY_CACHE_SECONDS)
    return entry


def api_key_cache_refresh(api_key: ApiKey) -> None:
    """Put a key row returned by `api_key_authenticate` back into the cache
    (after stamping `last_used_at`) under its original read time and no
    longer than it would have lived anyway, so a change it predates still
    marks it stale."""
    read_at = api_key.cache_read_at
    remaining = read_at + settings.API_KEY_CACHE_SECONDS - time.time()
    if remaining > 1:
        entry = CachedKey(read_at, api_key)
        cache.set(api_key_cache_key(api_key.prefix), entry, remaining)


def api_key_authenticate(*, raw_key: str) -> ApiKey | None:
    """The active key matching `raw_key`, compared in constant time; None
    otherwise. `cache_read_at` on the key says when its row was read.

    The row (with its workspace) comes from the shared cache, so an
    authenticated request costs no query; an unknown prefix is cached too (as
    a miss), so a client with a bad key costs none either. Every save or
    delete of a key or its workspace records a change time when it commits
    (`accounts.receivers`), and a cached row read before it is read again: a
    revoke is effective on the next request, in every worker.
    """
    parts = split_raw_key(raw_key)
    if parts is None:
        return None
    prefix, _ = parts
    entry = _cached_key(prefix)
    api_key = entry.api_key
    expected = api_key.key_hash if api_key is not None else "0" * 64
    # Compare even when no key matched, so timing does not reveal which prefixes exist.
    matches = hmac.compare_digest(expected, hash_key_secret(raw_key))
    if api_key is None or not matches or api_key.revoked_at is not None:
        return None
    api_key.cache_read_at = entry.read_at
    return api_key


def api_key_prefixes(*, workspace_id: str) -> list[str]:
    return list(ApiKey.objects.filter(workspace_id=workspace_id).values_list("prefix", flat=True))


def operator_workspace_ids(*, user) -> QuerySet | None:
    """The workspaces a staff user may see in the admin, as a subquery of ids
    (so scoping a list costs no query of its own); None for a superuser, who
    sees every workspace."""
    if user.is_superuser:
        return None
    return WorkspaceMembership.objects.filter(user_id=user.pk).values_list("workspace_id", flat=True)
