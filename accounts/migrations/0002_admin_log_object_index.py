"""An index on the admin log's (content type, object id).

Django's admin log has none, so finding one object's entries (the history page,
or the entries a redaction must scrub for one workspace's objects) read the
whole log. The table belongs to `django.contrib.admin`, hence raw SQL here."""

from django.db import migrations

INDEX = "admin_log_object"


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("admin", "0003_logentry_add_action_flag_choices"),
    ]

    operations = [
        migrations.RunSQL(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON django_admin_log (content_type_id, object_id)",
            f"DROP INDEX IF EXISTS {INDEX}",
        ),
    ]
