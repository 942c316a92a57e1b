"""Maintenance of SQLite FTS5 indexes kept in step with a table by triggers,
shared by the memory search index and the recall index.

Django rebuilds a SQLite table (dropping its triggers) whenever a migration
alters it, so `fts5_ensure` runs after every `migrate` and rebuilds an index
whose triggers went missing. Every name here is a module constant of the
caller; values from users never reach this SQL.
"""

# ruff: noqa: S608
from __future__ import annotations

from collections.abc import Mapping


def fts5_ensure(connection, *, table: str, fts_table: str, create_sql: str, triggers: Mapping[str, str]) -> bool:
    """Create the FTS5 table and its triggers if missing (SQLite only;
    idempotent). Returns True when the index was (re)built from `table`."""
    if connection.vendor != "sqlite":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = %s", [table])
        if cursor.fetchone() is None:
            return False
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s AND name LIKE %s",
            [table, f"{fts_table}_%"],
        )
        if {row[0] for row in cursor.fetchall()} == set(triggers):
            return False
        cursor.execute(create_sql)
        for sql in triggers.values():
            cursor.execute(sql)
        # Triggers were missing, so rows may have changed unseen (or the table
        # was rebuilt with new rowids): re-read everything from the table.
        cursor.execute(f"INSERT INTO {fts_table}({fts_table}) VALUES ('rebuild')")
    return True


def fts5_drop(connection, *, fts_table: str, triggers: Mapping[str, str]) -> None:
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        for name in triggers:
            cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
        cursor.execute(f"DROP TABLE IF EXISTS {fts_table}")


def fts5_optimize(connection, *, fts_table: str) -> None:
    """Merge every segment into one, so that the terms of deleted or replaced
    rows leave the file instead of staying behind a delete marker."""
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", [fts_table])
        if cursor.fetchone() is not None:
            cursor.execute(f"INSERT INTO {fts_table}({fts_table}) VALUES ('optimize')")
