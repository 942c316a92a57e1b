from django.db import migrations

# PostgreSQL's LIKE twins (varchar_pattern_ops) that Django makes beside the
# index of a varchar key or foreign key. Nothing filters these columns by
# prefix: a checkpoint write's workspace (its plain index stays, for a
# workspace's deletion) and a branch's id and parent. Every LangGraph write
# row paid one, and every new thread's `main` branch two.
# (index, table, column)
LIKE_INDEXES = [
    ("conversations_checkpointwrite_workspace_id_427a9fd1_like", "conversations_checkpointwrite", "workspace_id"),
    ("conversations_branch_id_733b8450_like", "conversations_branch", "id"),
    ("conversations_branch_parent_id_f6c3aaa9_like", "conversations_branch", "parent_id"),
]


def drop_like_indexes(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for name, _table, _column in LIKE_INDEXES:
            schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(name)}")


def restore_like_indexes(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        q = schema_editor.quote_name
        for name, table, column in LIKE_INDEXES:
            schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {q(name)} ON {q(table)} ({q(column)} varchar_pattern_ops)")


class Migration(migrations.Migration):

    dependencies = [
        ("conversations", "0011_checkpoint_indexes_lead_with_fks"),
    ]

    operations = [
        migrations.RunPython(drop_like_indexes, restore_like_indexes),
    ]
