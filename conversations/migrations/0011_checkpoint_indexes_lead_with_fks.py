import django.db.models.deletion
from django.db import migrations, models

# The foreign keys' own indexes on checkpoints and their writes: every index
# below leads with the same column (uniq_checkpoint and uniq_checkpoint_write
# with the conversation, checkpoint_ws_id and checkpoint_ws_run with the
# workspace), yet each put and write maintained them (and PostgreSQL a LIKE
# twin of the workspace's). Only the indexes go: the state says db_index=False,
# and the database drops them by the names Django gave them, without
# dropping and validating again the foreign keys as an AlterField would.
INDEXES = [
    ("conversations_checkpoint", "conversations_checkpoint_conversation_id_9aaaaa0d", "conversation_id", False),
    ("conversations_checkpoint", "conversations_checkpoint_workspace_id_9f008967", "workspace_id", False),
    ("conversations_checkpoint", "conversations_checkpoint_workspace_id_9f008967_like", "workspace_id", True),
    ("conversations_checkpointwrite", "conversations_checkpointwrite_conversation_id_45a0a215", "conversation_id",
     False),
]


def drop_indexes(apps, schema_editor):
    for _table, name, _column, _like in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(name)}")


def restore_indexes(apps, schema_editor):
    postgresql = schema_editor.connection.vendor == "postgresql"
    for table, name, column, like in INDEXES:
        if like and not postgresql:
            continue
        ops = " varchar_pattern_ops" if like else ""
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {schema_editor.quote_name(name)} "
                              f"ON {schema_editor.quote_name(table)} ({schema_editor.quote_name(column)}{ops})")


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
