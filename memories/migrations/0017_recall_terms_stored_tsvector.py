"""PostgreSQL: the recall entries' terms as a stored `tsvector` column with
its GIN index, in place of the GIN index on the expression
`to_tsvector('simple', terms)`.

With the expression index every matching row's text was parsed again at
query time, once to re-check the match and once for `ts_rank`: on 20,000
entries whose terms a common query matched half of, the shortlist took
~300 ms, with the stored column ~125 ms (and bounded further by
`index.RANK_POOL`). SQLite keeps its FTS5 table; this is a no-op there.
"""

from django.db import migrations


def forwards(apps, schema_editor):
    from memories.recall import fulltext as index

    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS recall_terms_fts")
        for sql in index.postgres_index_sql():
            schema_editor.execute(sql)


def backwards(apps, schema_editor):
    from memories.recall import fulltext as index

    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE {index.ENTRY_TABLE} DROP COLUMN IF EXISTS {index.TSV_COLUMN}")
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS recall_terms_fts ON {index.ENTRY_TABLE} "
                              "USING gin (to_tsvector('simple', terms))")


class Migration(migrations.Migration):
    dependencies = [("memories", "0016_conversation_resource_moved_in")]

    operations = [migrations.RunPython(forwards, backwards)]
