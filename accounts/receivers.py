"""Cache coherence for authentication, whatever path saved the row (services,
admin forms, restores): a revoke is effective at once. Connected by
`AccountsConfig.ready()`."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save, pre_delete

from accounts.models import ApiKey, Workspace
from accounts.selectors import api_key_cache_key, api_key_changed_key, api_key_prefixes


def _key_changed(sender, instance, **kwargs) -> None:
    """A key or a workspace changed or went away: once the change commits,
    record when, so cached key rows read before it are read again (see
    `accounts.selectors.api_key_authenticate`)."""
    prefixes = [instance.prefix] if isinstance(instance, ApiKey) else api_key_prefixes(workspace_id=instance.pk)
    if prefixes:
        # Now, for readers on this connection (they see the change already),
        # and again at the commit, for rows other connections read meanwhile.
        _mark_changed(prefixes)
        transaction.on_commit(lambda: _mark_changed(prefixes))


def _mark_changed(prefixes: list[str]) -> None:
    now = time.time()
    # Outlives every cached row read before the change (rows live at most
    # API_KEY_CACHE_SECONDS from their read).
    cache.set_many({api_key_changed_key(p): now for p in prefixes}, settings.API_KEY_CACHE_SECONDS + 60)
    cache.delete_many([api_key_cache_key(p) for p in prefixes])


def connect() -> None:
    for model in (ApiKey, Workspace):
        post_save.connect(_key_changed, sender=model, dispatch_uid=f"api_key_changed_{model.__name__}")
    post_delete.connect(_key_changed, sender=ApiKey, dispatch_uid="api_key_changed_deleted_key")
    # A workspace's keys are deleted with it: list them while they exist.
    pre_delete.connect(_key_changed, sender=Workspace, dispatch_uid="api_key_changed_deleted_workspace")
