"""An index matching the admin's default memory order (pending first, then the
least confident, then the newest), so the first page of 100,000 memories is
read from the index instead of sorting the whole table. Raw SQL, identical on
SQLite and PostgreSQL; `memories.admin.columns.REVIEW_RANK_SQL` must stay the
same text for the planners to match it."""

from django.db import migrations

INDEX_SQL = (
    "CREATE INDEX IF NOT EXISTS mem_admin_review_order ON memories_memoryitem "
    "((CASE lifecycle_status WHEN 'pending' THEN 0 WHEN 'active' THEN 1 ELSE 2 END), "
    "confidence, created_at DESC, id DESC)"
)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0004_scope_state_rolling_summary"),
    ]

    operations = [
        migrations.RunSQL(INDEX_SQL, reverse_sql="DROP INDEX IF EXISTS mem_admin_review_order"),
    ]
