import django.db.models.deletion
from django.db import migrations, models

# The foreign keys' own indexes on checkpoints and their writes: another
# index leads with each column (uniq_checkpoint and uniq_checkpoint_write with
# the conversation, checkpoint_ws_id and checkpoint_ws_run with the
# workspace), yet each put and write maintained them (and PostgreSQL a LIKE
# twin of the workspace's). Only the indexes go: the state says db_index=False,
# and the database drops them by the names Django gave them, without
# dropping and validating again the foreign keys as an AlterField would.
# (index, table, column, whether PostgreSQL has its LIKE twin `<index>_like`:
# a varchar column's, not an integer's).
FOREIGN_KEY_INDEXES = [
    ("conversations_checkpoint_conversation_id_9aaaaa0d", "conversations_checkpoint", "conversation_id", False),
    ("conversations_checkpoint_workspace_id_9f008967", "conversations_checkpoint", "workspace_id", True),
    ("conversations_checkpointwrite_conversation_id_45a0a215", "conversations_checkpointwrite", "conversation_id",
     False),
]


def drop_indexes(apps, schema_editor):
    q = schema_editor.quote_name
    for name, _table, _column, like_twin in FOREIGN_KEY_INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {q(name)}")
        if like_twin:
            schema_editor.execute(f"DROP INDEX IF EXISTS {q(name + '_like')}")


def restore_indexes(apps, schema_editor):
    q = schema_editor.quote_name
    postgresql = schema_editor.connection.vendor == "postgresql"
    for name, table, column, like_twin in FOREIGN_KEY_INDEXES:
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {q(name)} ON {q(table)} ({q(column)})")
        if like_twin and postgresql:
            schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {q(name + '_like')} ON {q(table)} "
                                  f"({q(column)} varchar_pattern_ops)")


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0003_workspace_membership"),
        ("conversations", "0010_no_message_id_like_index"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="checkpoint",
                    name="conversation",
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE,
                                            related_name="checkpoints", to="conversations.conversation"),
                ),
                migrations.AlterField(
                    model_name="checkpoint",
                    name="workspace",
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE,
                                            related_name="+", to="accounts.workspace"),
                ),
                migrations.AlterField(
                    model_name="checkpointwrite",
                    name="conversation",
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE,
                                            related_name="checkpoint_writes", to="conversations.conversation"),
                ),
            ],
            database_operations=[migrations.RunPython(drop_indexes, restore_indexes)],
        ),
    ]
