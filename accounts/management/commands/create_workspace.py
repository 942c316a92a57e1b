from django.core.management.base import BaseCommand, CommandError

from accounts.services import workspace_create
from memory_project.errors import DomainError


class Command(BaseCommand):
    help = "Create a workspace."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--slug")
        parser.add_argument("--requires-review", action="store_true", help="Extracted memories wait for approval.")

    def handle(self, *args, name, slug=None, requires_review=False, **options):
        try:
            workspace = workspace_create(name=name, slug=slug, requires_review=requires_review)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"{workspace.id} {workspace.slug}")
