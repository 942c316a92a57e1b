from django.db import migrations

# PostgreSQL's LIKE twin (varchar_pattern_ops) of the message primary key that
# Django makes for a CharField key: nothing filters message ids by prefix, and
# it was paid on every append.
NAME, TABLE = "conversations_message_id_f49790af_like", "conversations_message"


def drop_like_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(NAME)}")


def restore_like_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {schema_editor.quote_name(NAME)} "
                              f"ON {schema_editor.quote_name(TABLE)} (id varchar_pattern_ops)")


class Migration(migrations.Migration):

    dependencies = [
        ("conversations", "0009_system_message_index"),
    ]

    operations = [
        migrations.RunPython(drop_like_index, restore_like_index),
    ]
