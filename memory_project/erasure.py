"""Erased text leaves the database files, not only the rows.

A DELETE or UPDATE leaves the old bytes behind: SQLite in its write-ahead log
(and, without `secure_delete`, in free pages), PostgreSQL in the dead tuple of
the heap and TOAST files and in its indexes until the table is rewritten.
Every erasure calls `erasure_on_disk()` inside its transaction; once the
transaction commits:

- SQLite: a TRUNCATE checkpoint copies the log back into the database file
  (where `secure_delete` already zeroed the deleted cells) and empties it. A
  PASSIVE checkpoint would leave the old frames in the log until it wraps.
- PostgreSQL, with `MEMORY_ERASURE_REWRITE` on (the default): `VACUUM FULL` of
  the tables the erasure touched rewrites them and their indexes into new
  files, so no dead tuple of the text is left in the table files when the
  call returns. A rewrite keeps the row versions a running transaction can
  still see, so it first waits (at most `MEMORY_ERASURE_REWRITE_WAIT_SECONDS`)
  for the transactions that were running when the erasure committed, those
  of other databases of the same server included. It takes
  each table's exclusive lock for the rewrite; with the setting off, `manage.py erasure_rewrite` does the same on the operator's
  schedule. What PostgreSQL has already written to its WAL and to backups
  stays there until they rotate (README, "Erasure on disk").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

from django.conf import settings
from django.db import connection, transaction

logger = logging.getLogger(__name__)

# A rewrite waits at most this long for a table's lock; a busy table is left
# for the next erasure or for `erasure_rewrite` rather than stalling traffic.
REWRITE_LOCK_TIMEOUT = "5s"
# How often a rewrite looks again for the transactions it waits for.
WAIT_STEP_SECONDS = 0.1


class _Flush:
    """The one after-commit flush of a transaction, gathering its tables."""

    def __init__(self) -> None:
        self.tables: set[str] = set()

    def __call__(self) -> None:
        erasure_flush(tables=sorted(self.tables))


def erasure_on_disk(tables: Iterable[str] = ()) -> None:
    """Flush the erased text out of the files once the current transaction
    commits (at once outside one). `tables`: the database tables the erasure
    changed (PostgreSQL rewrites those; SQLite checkpoints the whole file)."""
    if not connection.in_atomic_block:
        erasure_flush(tables=tables)
        return
    # A rolled-back transaction drops its callbacks, so the pending flush is
    # looked up among the connection's own rather than remembered elsewhere.
    for _sids, func, _robust in connection.run_on_commit:
        if isinstance(func, _Flush):
            func.tables.update(tables)
            return
    flush = _Flush()
    flush.tables.update(tables)
    transaction.on_commit(flush)


def erasure_flush(*, tables: Iterable[str], rewrite: bool | None = None) -> list[str]:
    """Checkpoint (SQLite) or rewrite (PostgreSQL) now; returns the tables rewritten.
    Must run outside any transaction."""
    if connection.in_atomic_block:
        return []
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return []
    if connection.vendor != "postgresql":
        return []
    if rewrite is None:
        rewrite = settings.MEMORY_ERASURE_REWRITE
    if not rewrite:
        return []
    existing = set(connection.introspection.table_names())
    deadline = time.monotonic() + settings.MEMORY_ERASURE_REWRITE_WAIT_SECONDS
    done = []
    with connection.cursor() as cursor:
        _wait_for_older_transactions(cursor, deadline)
        cursor.execute(f"SET lock_timeout = '{REWRITE_LOCK_TIMEOUT}'")
        try:
            for table in sorted(set(tables) & existing):
                if _rewrite(cursor, table):
                    done.append(table)
        finally:
            cursor.execute("RESET lock_timeout")
    return done


def _wait_for_older_transactions(cursor, deadline: float) -> None:
    """Wait (until `deadline`) until no transaction that was running when
    the erasure committed can keep its rows alive: a rewrite copies every
    row version some transaction might still see.

    Two kinds hold them. A snapshot of this database taken before the
    commit (`backend_xmin`) still sees the deleted rows. And a transaction
    id still running anywhere in the cluster, in another database too, lowers
    the snapshot the rewrite itself takes, which then counts the deleted rows
    as recently dead and keeps them; that is what `pg_current_snapshot()`'s
    xmin shows, and it needs no right to read other users' sessions."""
    cursor.execute("SELECT clock_timestamp(), pg_snapshot_xmax(pg_current_snapshot())::text")
    started, first_unassigned = cursor.fetchone()
    while True:
        cursor.execute(
            "SELECT pg_snapshot_xmin(pg_current_snapshot()) < %s::xid8 OR EXISTS ("
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND backend_xmin IS NOT NULL AND xact_start < %s)",
            [first_unassigned, started],
        )
        if not cursor.fetchone()[0] or time.monotonic() >= deadline:
            return
        time.sleep(WAIT_STEP_SECONDS)


def _rewrite(cursor, table: str) -> bool:
    """VACUUM FULL one table; False when it was left as it is (busy)."""
    try:
        cursor.execute(f"VACUUM (FULL) {connection.ops.quote_name(table)}")
    except Exception:
        # The erasure itself is committed; a table left unrewritten is what
        # `erasure_rewrite` is for.
        logger.warning("erasure: %s was not rewritten (busy); run erasure_rewrite", table, exc_info=True)
        return False
    return True
