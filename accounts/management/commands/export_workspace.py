import os
import sys

from django.core.management.base import BaseCommand, CommandError

from accounts.backup import workspace_export
from memory_project.errors import DomainError


class Command(BaseCommand):
    help = "Write a workspace (every table it owns, API keys as hashes) to a JSON Lines file."

    def add_arguments(self, parser):
        parser.add_argument("workspace", help="workspace id or slug")
        parser.add_argument("--output", "-o", required=True, help="file to write, or '-' for standard output")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on standard error")

    def handle(self, *args, workspace, output, no_progress=False, **options):
        progress = not no_progress
        try:
            if output == "-":
                counts = workspace_export(workspace_ref=workspace, out=self.stdout, progress=progress)
            else:
                # Written beside the target and renamed at the end, so a failed
                # export never leaves a plausible-looking partial backup.
                partial = f"{output}.partial"
                with open(partial, "w", encoding="utf-8") as fh:
                    counts = workspace_export(workspace_ref=workspace, out=fh, progress=progress)
                os.replace(partial, output)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        total = sum(counts.values())
        print(f"Exported {total} rows from {workspace} to {output}.", file=sys.stderr)
