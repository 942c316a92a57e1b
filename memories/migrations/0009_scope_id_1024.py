"""Scope ids up to 1,024 characters: a branch scope id (JSON.stringify of a
256-byte conversation id and a 128-character branch name, escapes included)
can reach 775, past the former 600 (PostgreSQL refused the row, so such a
branch was never extracted).

On SQLite, altering a column rebuilds the table, which drops the indexes made
by raw SQL: the admin's review-order index (0005) is made again here. The
search triggers are restored after every migrate (`memories.search`)."""

from django.db import migrations, models

REVIEW_ORDER_INDEX_SQL = (
    "CREATE INDEX IF NOT EXISTS mem_admin_review_order ON memories_memoryitem "
    "((CASE lifecycle_status WHEN 'pending' THEN 0 WHEN 'active' THEN 1 ELSE 2 END), "
    "confidence, created_at DESC, id DESC)"
)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0008_scope_state_pending_from_branch"),
    ]

    operations = [
        migrations.AlterField(
            model_name="memoryitem",
            name="scope_id",
            field=models.CharField(blank=True, default="", max_length=1024),
        ),
        migrations.AlterField(
            model_name="memoryjob",
            name="scope_id",
            field=models.CharField(blank=True, default="", max_length=1024),
        ),
        migrations.AlterField(
            model_name="scopestate",
            name="scope_id",
            field=models.CharField(max_length=1024),
        ),
        migrations.RunSQL(REVIEW_ORDER_INDEX_SQL, reverse_sql=migrations.RunSQL.noop),
    ]
