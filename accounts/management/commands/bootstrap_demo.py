"""Set up the embedded demo: a workspace, an API key and an admin login.

Idempotent: a second run keeps the workspace, the admin user and the demo key
(its secret is kept beside the admin password under `var/`, readable by the
owner only, so it can be printed again). A key that no longer works (revoked,
or the database was reset) is replaced, and every other demo key of the
workspace is revoked, so exactly one demo key is valid at a time.
"""

import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from accounts.models import ApiKey, Workspace
from accounts.selectors import api_key_authenticate
from accounts.services import api_key_create, api_key_revoke, workspace_create

DEMO_KEY_NAME = "demo"


def _write_secret(path: Path, value: str) -> None:
    """Owner-only from the first byte: writing and then chmod-ing leaves a
    moment when the secret is readable by all, and an existing file keeps its
    mode when opened for writing."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(value)


class Command(BaseCommand):
    help = "Create (or reuse) the demo workspace, its API key and an admin superuser; print them."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument("--output", help="also write the credentials to this file")
        parser.add_argument(
            "--migrate", action="store_true", help="apply migrations first (one process start instead of two)"
        )

    def handle(self, *args, base_url, output=None, migrate=False, **options):
        if migrate:
            call_command("migrate", interactive=False, verbosity=0)
        workspace = Workspace.objects.filter(slug="demo").first() or workspace_create(name="Demo", slug="demo")
        raw_key = self._demo_key(workspace)
        password = self._admin_password()
        lines = [
            f"Workspace:  {workspace.name} ({workspace.id})",
            f"API key:    {raw_key}",
            f"Admin:      {base_url}/admin/  user: admin  password: {password}",
            f"API docs:   {base_url}/v1/docs/",
        ]
        text = "\n".join(lines)
        self.stdout.write(text)
        if output:
            _write_secret(Path(output), text + "\n")

    def _demo_key(self, workspace: Workspace) -> str:
        key_file = settings.VAR_DIR / "demo_api_key"
        raw_key = key_file.read_text().strip() if key_file.exists() else ""
        current = api_key_authenticate(raw_key=raw_key) if raw_key else None
        if current is None or current.workspace_id != workspace.pk:
            created = api_key_create(workspace=workspace, name=DEMO_KEY_NAME)
            current, raw_key = created.api_key, created.raw_key
            _write_secret(key_file, raw_key)
        # Keys minted by earlier runs (whose secrets were printed and may have
        # been copied somewhere) stop working: one demo key at a time.
        stale = ApiKey.objects.filter(workspace=workspace, name=DEMO_KEY_NAME, revoked_at__isnull=True).exclude(
            pk=current.pk
        )
        for api_key in stale:
            api_key_revoke(api_key=api_key)
        return raw_key

    def _admin_password(self) -> str:
        User = get_user_model()
        password_file = settings.VAR_DIR / "admin_password"
        user = User.objects.filter(username="admin").first()
        if user is None or not password_file.exists():
            password = secrets.token_urlsafe(12)
            if user is None:
                User.objects.create_superuser("admin", "admin@example.com", password)
            else:
                user.set_password(password)
                user.save(update_fields=["password"])
            _write_secret(password_file, password)
        return password_file.read_text().strip()
