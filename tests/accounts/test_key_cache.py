"""API keys are read from the shared cache: an authenticated request costs no
query, and every change to a key or its workspace is seen on the next request."""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import ApiKey
from accounts.receivers import _mark_changed
from accounts.selectors import CachedKey, api_key_authenticate, api_key_cache_key
from accounts.services import api_key_create, api_key_revoke
from tests.conversations.helpers import append_ok, conv_url

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


def _queries(ctx: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in ctx.captured_queries]


def test_an_authenticated_request_reads_no_key_row(api, workspace):
    append_ok(api, "c1", "hello")  # warms the cache (and stamps last_used_at)
    with CaptureQueriesContext(connection) as ctx:
        assert api.get(conv_url("c1", "/messages")).status_code == 200
    assert not [sql for sql in _queries(ctx) if "accounts_" in sql], _queries(ctx)


def test_a_20_message_page_costs_one_statement(api, workspace, django_assert_num_queries):
    for n in range(25):
        append_ok(api, "c1", f"m{n}")
    api.get(conv_url("c1", "/messages"))
    # One keyset query, the branch and the cursor's floor as subqueries; no
    # key lookup and no health check.
    with django_assert_num_queries(1):
        response = api.get(conv_url("c1", "/messages"), {"limit": 20})
    assert len(response.json()["data"]) == 20
    with django_assert_num_queries(1):
        deeper = api.get(conv_url("c1", "/messages"), {"limit": 20, "after": response.json()["meta"]["next_cursor"]})
    assert len(deeper.json()["data"]) == 5


def test_a_bad_key_is_cached_as_unknown(workspace):
    raw = "mk_ffffffffffff_" + "x" * 43
    assert api_key_authenticate(raw_key=raw) is None
    with CaptureQueriesContext(connection) as ctx:
        assert api_key_authenticate(raw_key=raw) is None
    assert _queries(ctx) == []


def test_revoke_is_effective_on_the_next_request(api, workspace, api_key):
    assert api.get("/v1/conversations").status_code == 200
    api_key_revoke(api_key=ApiKey.objects.get(prefix=api_key.split("_")[1]))
    assert api.get("/v1/conversations").status_code == 401


def test_a_workspace_change_is_seen_at_once(workspace):
    raw = api_key_create(workspace=workspace, name="k").raw_key
    assert api_key_authenticate(raw_key=raw).workspace.requires_review is False
    workspace.requires_review = True
    workspace.save(update_fields=["requires_review"])
    assert api_key_authenticate(raw_key=raw).workspace.requires_review is True


def test_admin_style_edits_and_deletes_are_seen(workspace):
    created = api_key_create(workspace=workspace, name="k")
    assert api_key_authenticate(raw_key=created.raw_key).read_only is False
    key = ApiKey.objects.get(pk=created.api_key.pk)
    key.read_only = True
    key.save()
    assert api_key_authenticate(raw_key=created.raw_key).read_only is True
    key.delete()
    assert api_key_authenticate(raw_key=created.raw_key) is None


def test_a_row_read_before_a_change_is_never_served_after_it(workspace):
    """The race a plain delete-on-change loses: a request reads the old row,
    the revoke commits and drops the entry, then the request caches what it
    read. The change time outlives that entry and marks it stale."""
    created = api_key_create(workspace=workspace, name="k")
    prefix = created.api_key.prefix
    stale_row = ApiKey.objects.select_related("workspace").get(prefix=prefix)
    read_before = time.time()
    ApiKey.objects.filter(pk=created.api_key.pk).update(revoked_at=timezone.now())  # behind the ORM's signals
    _mark_changed([prefix])  # what the revoke's commit does
    cache.set(api_key_cache_key(prefix), CachedKey(read_before - 0.001, stale_row), 300)  # the late write
    assert api_key_authenticate(raw_key=created.raw_key) is None


def test_last_used_is_written_once_a_minute_not_per_request(api, workspace, api_key):
    api.get("/v1/conversations")
    with CaptureQueriesContext(connection) as ctx:
        for _ in range(3):
            api.get("/v1/conversations")
    assert not [sql for sql in _queries(ctx) if "accounts_apikey" in sql]
    assert ApiKey.objects.get(prefix=api_key.split("_")[1]).last_used_at is not None
