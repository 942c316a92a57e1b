from django.core.management.base import BaseCommand, CommandError

from accounts.models import Workspace
from accounts.services import api_key_create


class Command(BaseCommand):
    help = "Create an API key for a workspace and print it (it is shown only this once)."

    def add_arguments(self, parser):
        parser.add_argument("workspace", help="workspace id or slug")
        parser.add_argument("--name", default="cli")
        parser.add_argument("--read-only", action="store_true")

    def handle(self, *args, workspace, name, read_only=False, **options):
        found = Workspace.objects.filter(id=workspace).first() or Workspace.objects.filter(slug=workspace).first()
        if found is None:
            raise CommandError(f"No workspace '{workspace}'.")
        created = api_key_create(workspace=found, name=name, read_only=read_only)
        self.stdout.write(created.raw_key)
