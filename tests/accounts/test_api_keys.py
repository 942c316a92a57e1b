from __future__ import annotations

import pytest
from django.core.management import call_command

from accounts.models import ApiKey
from accounts.selectors import api_key_authenticate
from accounts.services import api_key_create, api_key_revoke, hash_key_secret

pytestmark = pytest.mark.django_db


def test_key_is_stored_hashed_and_shown_once(workspace):
    created = api_key_create(workspace=workspace, name="agent")
    stored = ApiKey.objects.get(pk=created.api_key.pk)
    assert created.raw_key.startswith("mk_")
    assert created.raw_key not in (stored.key_hash, stored.prefix, stored.name)
    assert stored.key_hash == hash_key_secret(created.raw_key)
    assert api_key_authenticate(raw_key=created.raw_key) == stored


@pytest.mark.parametrize("raw", ["", "nope", "mk_short_x", "mk_000000000000_wrong", "Bearer x"])
def test_malformed_or_unknown_keys_do_not_authenticate(workspace, raw):
    api_key_create(workspace=workspace, name="agent")
    assert api_key_authenticate(raw_key=raw) is None


def test_wrong_secret_with_a_real_prefix_is_refused(workspace):
    created = api_key_create(workspace=workspace, name="agent")
    forged = created.raw_key[:-3] + ("aaa" if not created.raw_key.endswith("aaa") else "bbb")
    assert api_key_authenticate(raw_key=forged) is None


def test_revoked_key_is_refused(workspace):
    created = api_key_create(workspace=workspace, name="agent")
    api_key_revoke(api_key=created.api_key)
    assert api_key_authenticate(raw_key=created.raw_key) is None


def test_schema_is_public_and_lists_v1_paths(anon_api):
    response = anon_api.get("/v1/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.")


def test_unknown_api_route_answers_json_404(api):
    response = api.get("/v1/no-such-thing")
    assert response.status_code == 404
    assert response.json()["type"] == "error"
    assert response.json()["error"]["type"] == "not_found_error"


def test_management_commands_create_workspace_and_key(capsys):
    call_command("create_workspace", "Team", "--slug", "team")
    workspace_line = capsys.readouterr().out.strip()
    assert workspace_line.endswith("team")
    call_command("create_api_key", "team", "--read-only")
    raw = capsys.readouterr().out.strip()
    api_key = api_key_authenticate(raw_key=raw)
    assert api_key is not None and api_key.read_only and api_key.workspace.slug == "team"
