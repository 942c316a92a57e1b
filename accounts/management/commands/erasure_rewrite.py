from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from memory_project.erasure import erasure_flush
from memory_project.user_text import user_text_tables


class Command(BaseCommand):
    help = (
        "Rewrite every table that holds user text, so no dead copy of erased text is left in the database "
        "files: VACUUM FULL on PostgreSQL (each table locked while it is rewritten), a TRUNCATE checkpoint "
        "and VACUUM on SQLite. For MEMORY_ERASURE_REWRITE=off, run it on a schedule."
    )

    def handle(self, *args, **options):
        tables = user_text_tables()
        if connection.vendor == "sqlite":
            with connection.cursor() as cursor:
                cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                cursor.execute("VACUUM")
                cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.stdout.write(f"Checkpointed and vacuumed {connection.settings_dict['NAME']}.")
            return
        done = erasure_flush(tables=tables, rewrite=True)
        missed = sorted(set(tables) & set(connection.introspection.table_names()) - set(done))
        self.stdout.write(f"Rewrote {len(done)} table(s): {', '.join(done)}.")
        if missed:
            raise CommandError(f"Busy, not rewritten (run again): {', '.join(missed)}.")
