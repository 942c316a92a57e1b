"""Substring search indexes for memory items, one per database (see memories/search.py).

PostgreSQL: pg_trgm GIN indexes on UPPER(content) / UPPER(fact_key), the
expressions Django's `icontains` compiles to. SQLite: an external-content FTS5
table with the trigram tokenizer, kept in sync by triggers. Each branch is a
no-op on the other database.
"""

from django.db import migrations


def forwards(apps, schema_editor):
    from memories import search

    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        for sql in search.postgres_index_sql():
            schema_editor.execute(sql)
    elif connection.vendor == "sqlite":
        search.sqlite_index_ensure(connection)


def backwards(apps, schema_editor):
    from memories import search

    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS mem_content_trgm")
        schema_editor.execute("DROP INDEX IF EXISTS mem_fact_key_trgm")
    elif connection.vendor == "sqlite":
        search.sqlite_index_drop(connection)


class Migration(migrations.Migration):
    dependencies = [("memories", "0002_admin_review_and_redact_permission")]

    operations = [migrations.RunPython(forwards, backwards)]
