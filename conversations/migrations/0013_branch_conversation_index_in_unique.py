import django.db.models.deletion
from django.db import migrations, models

# A branch's own index on its conversation: `uniq_branch_name` (conversation,
# name) leads with the same column and serves every lookup by conversation,
# so every new conversation's `main` branch paid for an index nothing read.
# Only the index is dropped: Django's own AlterField would also drop and
# re-add the foreign key on PostgreSQL (checking every row under a lock) and
# rebuild the table on SQLite.
INDEX, TABLE, COLUMN = "conversations_branch_conversation_id_f8f182c0", "conversations_branch", "conversation_id"


def drop_index(apps, schema_editor):
    schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(INDEX)}")


def restore_index(apps, schema_editor):
    q = schema_editor.quote_name
    schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {q(INDEX)} ON {q(TABLE)} ({q(COLUMN)})")


class Migration(migrations.Migration):

    dependencies = [
        ("conversations", "0012_no_like_indexes_on_write_and_branch_ids"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="branch",
                    name="conversation",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="branches",
                        to="conversations.conversation",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(drop_index, restore_index)],
        ),
    ]
