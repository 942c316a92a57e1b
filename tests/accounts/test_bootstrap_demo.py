"""`make run`'s set-up: one demo key that survives restarts and is printed each time."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from accounts.models import ApiKey
from accounts.selectors import api_key_authenticate
from accounts.services import api_key_revoke

pytestmark = pytest.mark.django_db


@pytest.fixture
def var_dir(tmp_path, settings):
    settings.VAR_DIR = tmp_path
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return tmp_path


def run(output) -> dict[str, str]:
    out = StringIO()
    call_command("bootstrap_demo", "--output", str(output), stdout=out)
    lines = dict(line.split(":", 1) for line in out.getvalue().splitlines())
    assert output.read_text().strip() == out.getvalue().strip()
    assert oct(output.stat().st_mode & 0o777) == "0o600"
    return {key.strip(): value.strip() for key, value in lines.items()}


def test_restarts_keep_one_working_demo_key(var_dir):
    first = run(var_dir / "creds.txt")
    second = run(var_dir / "creds.txt")
    assert first["API key"] == second["API key"]
    assert first["Admin"] == second["Admin"]
    assert ApiKey.objects.filter(name="demo").count() == 1
    assert api_key_authenticate(raw_key=second["API key"]) is not None


def test_a_revoked_key_is_replaced_and_stray_demo_keys_are_revoked(var_dir):
    first = run(var_dir / "creds.txt")
    api_key_revoke(api_key=api_key_authenticate(raw_key=first["API key"]))
    second = run(var_dir / "creds.txt")
    assert second["API key"] != first["API key"]
    assert api_key_authenticate(raw_key=second["API key"]) is not None
    # A key some older run printed (a second demo key) stops working.
    (var_dir / "demo_api_key").unlink()
    third = run(var_dir / "creds.txt")
    assert api_key_authenticate(raw_key=second["API key"]) is None
    assert api_key_authenticate(raw_key=third["API key"]) is not None
    assert ApiKey.objects.filter(name="demo", revoked_at__isnull=True).count() == 1


def test_credentials_are_owner_only_even_over_a_readable_file(var_dir):
    output = var_dir / "demo-credentials.txt"
    output.write_text("old")
    output.chmod(0o644)
    run(output)
    for path in (output, var_dir / "admin_password", var_dir / "demo_api_key"):
        assert oct(path.stat().st_mode & 0o777) == "0o600", path
