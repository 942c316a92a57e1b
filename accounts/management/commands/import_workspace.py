import sys

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from accounts.backup import workspace_import
from memory_project.errors import DomainError


class Command(BaseCommand):
    help = (
        "Load a workspace export. Without --into it restores the workspace with its ids (it must not exist here); "
        "with --into it makes a copy under a new slug with new ids (API keys are not copied)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the export (JSON Lines), or '-' for standard input")
        parser.add_argument("--into", help="slug of a new workspace to copy into")
        parser.add_argument("--name", help="name of the new workspace (with --into)")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on standard error")

    def handle(self, *args, file, into=None, name=None, no_progress=False, **options):
        try:
            if file == "-":
                result = workspace_import(lines=sys.stdin, into=into, name=name, progress=not no_progress)
            else:
                with open(file, encoding="utf-8") as fh:
                    result = workspace_import(lines=fh, into=into, name=name, progress=not no_progress)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        except OSError as exc:
            raise CommandError(str(exc)) from exc
        # The recall index is derived: a copy's scope tokens name the new
        # workspace, so a copy's index is rebuilt (keeping the vectors the
        # export carried); a restore's is the original's. Either way what has
        # no vector is embedded here, with progress.
        call_command("recall_reindex", workspace=result.workspace.id, no_progress=no_progress,
                     embed_only=into is None, stdout=sys.stderr)
        rows = sum(result.counts.values())
        self.stdout.write(f"{result.workspace.id} {result.workspace.slug}")
        note = f"; not copied: {result.skipped}" if result.skipped else ""
        print(f"Imported {rows} rows into workspace '{result.workspace.slug}'{note}.", file=sys.stderr)
