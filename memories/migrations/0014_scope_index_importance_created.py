from django.db import migrations, models


def analyze_on_sqlite(apps, schema_editor):
    """SQLite takes an index without statistics for a very selective one: with
    the table's other indexes analyzed, a search list would be read through
    the new index's workspace prefix (every memory of the workspace) instead
    of the full-text match. Analyzing the table gives the new index its
    statistics (PostgreSQL plans from the table's, which it already has)."""
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute("ANALYZE memories_memoryitem")


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0003_workspace_membership'),
        ('memories', '0013_scope_index_importance'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='memoryitem',
            name='mem_ws_scope',
        ),
        migrations.AddIndex(
            model_name='memoryitem',
            index=models.Index(fields=['workspace', 'scope', 'scope_id', 'lifecycle_status', 'importance', 'created_at'], name='mem_ws_scope_importance'),
        ),
        migrations.RunPython(analyze_on_sqlite, migrations.RunPython.noop, elidable=True),
    ]
