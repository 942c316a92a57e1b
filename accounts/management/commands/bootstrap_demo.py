"""Set up the embedded demo: a workspace, an API key and an admin login.

Idempotent: a second run keeps the workspace and the admin user, and issues a
fresh key (the old secret cannot be shown again; it was never stored).
"""

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from accounts.models import Workspace
from accounts.services import api_key_create, workspace_create


class Command(BaseCommand):
    help = "Create the demo workspace, an API key and an admin superuser; print them."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument("--output", help="also write the credentials to this file")

    def handle(self, *args, base_url, output=None, **options):
        workspace = Workspace.objects.filter(slug="demo").first() or workspace_create(name="Demo", slug="demo")
        created = api_key_create(workspace=workspace, name="demo")
        User = get_user_model()
        password_file = self._password_file()
        user = User.objects.filter(username="admin").first()
        if user is None or not password_file.exists():
            password = secrets.token_urlsafe(12)
            if user is None:
                user = User.objects.create_superuser("admin", "admin@example.com", password)
            else:
                user.set_password(password)
                user.save(update_fields=["password"])
            password_file.write_text(password)
            password_file.chmod(0o600)
        password = password_file.read_text().strip()
        lines = [
            f"Workspace:  {workspace.name} ({workspace.id})",
            f"API key:    {created.raw_key}",
            f"Admin:      {base_url}/admin/  user: admin  password: {password}",
            f"API docs:   {base_url}/v1/docs/",
        ]
        text = "\n".join(lines)
        self.stdout.write(text)
        if output:
            with open(output, "w") as fh:
                fh.write(text + "\n")

    @staticmethod
    def _password_file():
        from django.conf import settings

        return settings.VAR_DIR / "admin_password"
