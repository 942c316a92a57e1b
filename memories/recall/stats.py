"""Running totals of the recall index per scope token (`RecallScopeStats`).

Triggers on the entry table keep them, on both databases, so that a query
reads its scopes' BM25 statistics and the state of their vectors in one
indexed statement, whatever the scopes hold:

- `entries`, `total_length`: BM25's N and the mean length (total / N);
- `embedded`: entries with a vector; `removed`: embedded entries deleted or
  re-embedded, ever. A process that cached a scope's vectors with the same
  `removed` has lost none of them; new ones are appended (`dense`).

PostgreSQL counts a whole statement at once (transition tables), so a
multi-row INSERT or a cascade DELETE costs one UPDATE of each scope's row.
SQLite counts per row. Entries are rebuilt, never patched (see `index`): an
UPDATE changes an entry's vector only, and only that is counted.

Django rebuilds a SQLite table (dropping its triggers) when a migration
alters it: `stats_ensure` runs after every `migrate`, puts them back and
counts every scope again.
"""

# Every name in this SQL is a module constant; values are bound parameters.
# ruff: noqa: S608
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection as default_connection

from memories.recall.models import RecallScopeStats

ENTRY_TABLE = "memories_recallentry"
STATS_TABLE = "memories_recallscopestats"

_POSTGRES_FUNCTIONS = {
    "recall_stats_insert": f"""
        INSERT INTO {STATS_TABLE} AS s (workspace_id, scope_token, entries, total_length, embedded, removed)
        SELECT workspace_id, scope_token, count(*), sum(length), count(*) FILTER (WHERE embedding_model <> ''), 0
        FROM new_rows GROUP BY workspace_id, scope_token ORDER BY workspace_id, scope_token
        ON CONFLICT (workspace_id, scope_token) DO UPDATE SET entries = s.entries + excluded.entries,
            total_length = s.total_length + excluded.total_length, embedded = s.embedded + excluded.embedded""",
    "recall_stats_delete": f"""
        UPDATE {STATS_TABLE} s SET entries = s.entries - d.n, total_length = s.total_length - d.total,
            embedded = s.embedded - d.emb, removed = s.removed + d.emb
        FROM (SELECT workspace_id, scope_token, count(*) AS n, sum(length) AS total,
                     count(*) FILTER (WHERE embedding_model <> '') AS emb
              FROM old_rows GROUP BY workspace_id, scope_token) d
        WHERE s.workspace_id = d.workspace_id AND s.scope_token = d.scope_token""",
    "recall_stats_update": f"""
        UPDATE {STATS_TABLE} s SET embedded = s.embedded + d.added - d.dropped, removed = s.removed + d.dropped
        FROM (SELECT n.workspace_id, n.scope_token,
                     count(*) FILTER (WHERE n.embedding_model <> '' AND (o.embedding_model = ''
                         OR o.embedding_model <> n.embedding_model OR o.embedding IS DISTINCT FROM n.embedding))
                         AS added,
                     count(*) FILTER (WHERE o.embedding_model <> '' AND (n.embedding_model = ''
                         OR o.embedding_model <> n.embedding_model OR o.embedding IS DISTINCT FROM n.embedding))
                         AS dropped
              FROM new_rows n JOIN old_rows o ON o.id = n.id GROUP BY n.workspace_id, n.scope_token) d
        WHERE s.workspace_id = d.workspace_id AND s.scope_token = d.scope_token AND d.added + d.dropped > 0""",
}
_POSTGRES_TRIGGERS = {
    "recall_stats_insert": "AFTER INSERT ON {t} REFERENCING NEW TABLE AS new_rows",
    "recall_stats_delete": "AFTER DELETE ON {t} REFERENCING OLD TABLE AS old_rows",
    "recall_stats_update": "AFTER UPDATE ON {t} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
}

_SQLITE_CHANGED = "(new.embedding_model <> old.embedding_model OR new.embedding IS NOT old.embedding)"
_SQLITE_TRIGGERS = {
    "recall_stats_ai": f"""
        CREATE TRIGGER IF NOT EXISTS recall_stats_ai AFTER INSERT ON {ENTRY_TABLE} BEGIN
            INSERT INTO {STATS_TABLE} (workspace_id, scope_token, entries, total_length, embedded, removed)
            VALUES (new.workspace_id, new.scope_token, 1, new.length, new.embedding_model <> '', 0)
            ON CONFLICT (workspace_id, scope_token) DO UPDATE SET entries = entries + 1,
                total_length = total_length + excluded.total_length, embedded = embedded + excluded.embedded;
        END""",
    "recall_stats_ad": f"""
        CREATE TRIGGER IF NOT EXISTS recall_stats_ad AFTER DELETE ON {ENTRY_TABLE} BEGIN
            UPDATE {STATS_TABLE} SET entries = entries - 1, total_length = total_length - old.length,
                embedded = embedded - (old.embedding_model <> ''), removed = removed + (old.embedding_model <> '')
            WHERE workspace_id = old.workspace_id AND scope_token = old.scope_token;
        END""",
    "recall_stats_au": f"""
        CREATE TRIGGER IF NOT EXISTS recall_stats_au AFTER UPDATE OF embedding, embedding_model ON {ENTRY_TABLE}
        BEGIN
            UPDATE {STATS_TABLE} SET
                embedded = embedded + (new.embedding_model <> '' AND (old.embedding_model = '' OR {_SQLITE_CHANGED}))
                    - (old.embedding_model <> '' AND (new.embedding_model = '' OR {_SQLITE_CHANGED})),
                removed = removed + (old.embedding_model <> '' AND (new.embedding_model = '' OR {_SQLITE_CHANGED}))
            WHERE workspace_id = new.workspace_id AND scope_token = new.scope_token;
        END""",
}

_RECOUNT = [
    f"DELETE FROM {STATS_TABLE}",
    f"INSERT INTO {STATS_TABLE} (workspace_id, scope_token, entries, total_length, embedded, removed) "
    f"SELECT workspace_id, scope_token, count(*), sum(length), "
    f"sum(CASE WHEN embedding_model <> '' THEN 1 ELSE 0 END), 0 FROM {ENTRY_TABLE} "
    f"GROUP BY workspace_id, scope_token",
]


def postgres_stats_sql() -> list[str]:
    statements = []
    for name, body in _POSTGRES_FUNCTIONS.items():
        statements.append(f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ "
                          f"BEGIN {body}; RETURN NULL; END $$")
        statements.append(f"DROP TRIGGER IF EXISTS {name} ON {ENTRY_TABLE}")
        statements.append(f"CREATE TRIGGER {name} {_POSTGRES_TRIGGERS[name].format(t=ENTRY_TABLE)} "
                          f"FOR EACH STATEMENT EXECUTE FUNCTION {name}()")
    return statements


def postgres_stats_drop_sql() -> list[str]:
    return [f"DROP TRIGGER IF EXISTS {name} ON {ENTRY_TABLE}; DROP FUNCTION IF EXISTS {name}()"
            for name in _POSTGRES_FUNCTIONS]


def stats_recount(connection=default_connection) -> None:
    """Count every scope again from the entries (after triggers were missing)."""
    with connection.cursor() as cursor:
        for sql in _RECOUNT:
            cursor.execute(sql)


def stats_install(connection=default_connection) -> None:
    """Triggers in place and every scope counted (the migration's step)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            for sql in postgres_stats_sql():
                cursor.execute(sql)
        else:
            for sql in _SQLITE_TRIGGERS.values():
                cursor.execute(sql)
    stats_recount(connection)


def stats_ensure(connection=default_connection) -> bool:
    """SQLite: put back triggers a table rebuild dropped, and count again.
    Returns True when it had to."""
    if connection.vendor != "sqlite":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (%s, %s)",
                       [ENTRY_TABLE, STATS_TABLE])
        if len(cursor.fetchall()) < 2:
            return False
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s "
                       "AND name LIKE 'recall_stats_%%'", [ENTRY_TABLE])
        if {row[0] for row in cursor.fetchall()} == set(_SQLITE_TRIGGERS):
            return False
    stats_install(connection)
    return True


@dataclass(frozen=True)
class ScopeState:
    entries: int
    total_length: int
    embedded: int
    removed: int


def scope_states(*, workspace_id: str, scope_tokens: Sequence[str]) -> dict[str, ScopeState]:
    """Each scope's totals, one indexed statement (a scope with no entry yet
    has no row)."""

    rows = RecallScopeStats.objects.filter(workspace_id=workspace_id, scope_token__in=list(scope_tokens)) \
        .values_list("scope_token", "entries", "total_length", "embedded", "removed")
    return {token: ScopeState(*values) for token, *values in rows}
