"""Full-text indexes of the recall index, one per database (see memories/recall/fulltext.py).

SQLite: an external-content FTS5 table over (terms, scope_token), kept in sync
by triggers. PostgreSQL: a GIN index on to_tsvector('simple', terms). Each
branch is a no-op on the other database.
"""

from django.db import migrations


def forwards(apps, schema_editor):
    from memories.recall import fulltext as index

    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        for sql in index.postgres_index_sql():
            schema_editor.execute(sql)
    elif connection.vendor == "sqlite":
        index.sqlite_index_ensure(connection)


def backwards(apps, schema_editor):
    from memories.recall import fulltext as index

    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS recall_terms_fts")
    elif connection.vendor == "sqlite":
        index.sqlite_index_drop(connection)


class Migration(migrations.Migration):
    dependencies = [("memories", "0006_recall_index_sources_user_scope")]

    operations = [migrations.RunPython(forwards, backwards)]
