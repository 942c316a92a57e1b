"""Adapters run against a live test server over HTTP."""

from tests.live_client import aclient, api_key, client, key_pool, new_key  # noqa: F401
