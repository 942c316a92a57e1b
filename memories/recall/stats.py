"""Running totals of the recall index per scope token (`RecallScopeStats`).

Triggers on the entry table keep them, on both databases, so that a query
reads its scopes' BM25 statistics and the state of their vectors in one
indexed statement, whatever the scopes hold:

- `entries`, `total_length`: BM25's N and the mean length (total / N);
- `embedded`: entries with a vector; `removed`: embedded entries deleted or
  re-embedded, ever. A process that cached a scope's vectors with the same
  `removed` has lost none of them; new ones are appended (`dense`).
- per term (`RecallTermStats`): in how many of the scope's entries it
  occurs, BM25's df. A row whose count reaches zero is deleted in the same
  statement, so an erased word leaves no row.

PostgreSQL counts a whole statement at once (transition tables), so a
multi-row INSERT or a cascade DELETE costs one UPDATE of each scope's row
and one upsert of each (scope, term). SQLite counts per row. PostgreSQL fires
a table's triggers in the order of their names: `recall_stats_*` takes the
scope's row before `recall_terms_*` takes any term's, so two transactions
writing one scope queue on the scope's row and never hold term rows in
opposite orders. Entries are rebuilt, never patched (see `index`): an
UPDATE changes an entry's vector only, and only that is counted (terms have
no UPDATE trigger: the pipeline writes a vector per statement, and each
would run it for nothing).

Django rebuilds a SQLite table (dropping its triggers) when a migration
alters it: `stats_ensure` runs after every `migrate`, puts them back and
counts every scope again.
"""

# Every name in this SQL is a module constant; values are bound parameters.
# ruff: noqa: S608
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.db import connection as default_connection
from django.db.models import Sum

from memories.recall.models import RecallScopeStats, RecallTermStats

ENTRY_TABLE = "memories_recallentry"
STATS_TABLE = "memories_recallscopestats"
TERMS_TABLE = "memories_recalltermstats"
TERM_MAX_CHARS = RecallTermStats._meta.get_field("term").max_length

# The distinct terms of one entry (`{row}.terms`: space-separated, see
# analysis.terms_text). Terms hold only [a-z0-9] and ideographs, so on SQLite
# they become a JSON array by quoting alone.
_PG_ENTRY_TERMS = ("(SELECT DISTINCT term FROM unnest(string_to_array(btrim({row}.terms), ' ')) AS term "
                   f"WHERE term <> '' AND length(term) <= {TERM_MAX_CHARS})")
_SQLITE_ENTRY_TERMS = ("""(SELECT DISTINCT value AS term FROM json_each('["' || replace(trim({row}.terms), ' ', '","') """
                       f"""|| '"]') WHERE value <> '' AND length(value) <= {TERM_MAX_CHARS})""")


def _postgres_term_delta(rows: str) -> str:
    """Add each term's signed count over `rows` (workspace_id, scope_token,
    terms, sign) to its row, in key order, and delete the rows left at zero."""
    return f"""
        WITH changed AS (
            INSERT INTO {TERMS_TABLE} AS s (workspace_id, scope_token, term, entries)
            SELECT r.workspace_id, r.scope_token, t.term, sum(r.sign) FROM ({rows}) r
            CROSS JOIN LATERAL {_PG_ENTRY_TERMS.format(row="r")} t
            GROUP BY r.workspace_id, r.scope_token, t.term HAVING sum(r.sign) <> 0
            ORDER BY r.workspace_id, r.scope_token, t.term
            ON CONFLICT (workspace_id, scope_token, term) DO UPDATE SET entries = s.entries + excluded.entries
            RETURNING s.id, s.entries)
        SELECT array_agg(id) INTO gone FROM changed WHERE entries <= 0;
        IF gone IS NOT NULL THEN DELETE FROM {TERMS_TABLE} WHERE id = ANY(gone); END IF"""


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
    "recall_terms_insert": _postgres_term_delta("SELECT workspace_id, scope_token, terms, 1 AS sign FROM new_rows"),
    "recall_terms_delete": _postgres_term_delta("SELECT workspace_id, scope_token, terms, -1 AS sign FROM old_rows"),
}
_POSTGRES_TRIGGERS = {
    "recall_stats_insert": "AFTER INSERT ON {t} REFERENCING NEW TABLE AS new_rows",
    "recall_stats_delete": "AFTER DELETE ON {t} REFERENCING OLD TABLE AS old_rows",
    "recall_stats_update": "AFTER UPDATE ON {t} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
    "recall_terms_insert": "AFTER INSERT ON {t} REFERENCING NEW TABLE AS new_rows",
    "recall_terms_delete": "AFTER DELETE ON {t} REFERENCING OLD TABLE AS old_rows",
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

_SQLITE_TERM_TRIGGERS = {
    "recall_terms_ai": f"""
        CREATE TRIGGER IF NOT EXISTS recall_terms_ai AFTER INSERT ON {ENTRY_TABLE} BEGIN
            INSERT INTO {TERMS_TABLE} (workspace_id, scope_token, term, entries)
            SELECT new.workspace_id, new.scope_token, term, 1 FROM {_SQLITE_ENTRY_TERMS.format(row="new")} WHERE true
            ON CONFLICT (workspace_id, scope_token, term) DO UPDATE SET entries = entries + 1;
        END""",
    "recall_terms_ad": f"""
        CREATE TRIGGER IF NOT EXISTS recall_terms_ad AFTER DELETE ON {ENTRY_TABLE} BEGIN
            UPDATE {TERMS_TABLE} SET entries = entries - 1
            WHERE workspace_id = old.workspace_id AND scope_token = old.scope_token
                AND term IN (SELECT term FROM {_SQLITE_ENTRY_TERMS.format(row="old")});
            DELETE FROM {TERMS_TABLE} WHERE workspace_id = old.workspace_id AND scope_token = old.scope_token
                AND entries <= 0 AND term IN (SELECT term FROM {_SQLITE_ENTRY_TERMS.format(row="old")});
        END""",
}


@dataclass(frozen=True)
class _Totals:
    """One kind of running total: the table it keeps, its triggers on each
    database and how it is counted from scratch."""

    table: str
    postgres_functions: tuple[str, ...]
    sqlite_triggers: dict[str, str]
    recount: Callable[[str], tuple[str, ...]]  # statements for a vendor


def _scope_recount(vendor: str) -> tuple[str, ...]:
    return (
        f"DELETE FROM {STATS_TABLE}",
        f"INSERT INTO {STATS_TABLE} (workspace_id, scope_token, entries, total_length, embedded, removed) "
        f"SELECT workspace_id, scope_token, count(*), sum(length), "
        f"sum(CASE WHEN embedding_model <> '' THEN 1 ELSE 0 END), 0 FROM {ENTRY_TABLE} "
        f"GROUP BY workspace_id, scope_token",
    )


def _term_recount(vendor: str) -> tuple[str, ...]:
    if vendor == "postgresql":
        terms, term = f"CROSS JOIN LATERAL {_PG_ENTRY_TERMS.format(row='e')} t", "t.term"
    else:  # a table-valued function takes the row's column; a subquery could not
        terms = ("""JOIN json_each('["' || replace(trim(e.terms), ' ', '","') || '"]') t """
                 f"ON t.value <> '' AND length(t.value) <= {TERM_MAX_CHARS}")
        term = "t.value"
    return (
        f"DELETE FROM {TERMS_TABLE}",
        f"INSERT INTO {TERMS_TABLE} (workspace_id, scope_token, term, entries) "
        f"SELECT e.workspace_id, e.scope_token, {term}, count(DISTINCT e.id) FROM {ENTRY_TABLE} e {terms} "
        f"GROUP BY e.workspace_id, e.scope_token, {term}",
    )


_SCOPE_TOTALS = _Totals(
    table=STATS_TABLE,
    postgres_functions=("recall_stats_insert", "recall_stats_delete", "recall_stats_update"),
    sqlite_triggers=_SQLITE_TRIGGERS,
    recount=_scope_recount,
)
_TERM_TOTALS = _Totals(
    table=TERMS_TABLE,
    postgres_functions=("recall_terms_insert", "recall_terms_delete"),
    sqlite_triggers=_SQLITE_TERM_TRIGGERS,
    recount=_term_recount,
)
# In the order a migration created their tables: each is installed once its
# table exists (the scope totals' migration predates the term counts).
_ALL_TOTALS = (_SCOPE_TOTALS, _TERM_TOTALS)


def _postgres_function_sql(name: str) -> list[str]:
    # `gone` holds the term rows a statement left at zero (unused by the
    # scope totals' functions).
    return [
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ "
        f"DECLARE gone bigint[]; BEGIN {_POSTGRES_FUNCTIONS[name]}; RETURN NULL; END $$",
        f"DROP TRIGGER IF EXISTS {name} ON {ENTRY_TABLE}",
        f"CREATE TRIGGER {name} {_POSTGRES_TRIGGERS[name].format(t=ENTRY_TABLE)} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {name}()",
    ]


def stats_uninstall(connection=default_connection, *, table: str) -> None:
    """The triggers that keep one kind of total (`STATS_TABLE` or
    `TERMS_TABLE`) gone: its migration's way back."""
    [totals] = [t for t in _ALL_TOTALS if t.table == table]
    if connection.vendor == "postgresql":
        statements = [f"DROP TRIGGER IF EXISTS {name} ON {ENTRY_TABLE}; DROP FUNCTION IF EXISTS {name}()"
                      for name in totals.postgres_functions]
    else:
        statements = [f"DROP TRIGGER IF EXISTS {name}" for name in totals.sqlite_triggers]
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def _present(connection) -> list[_Totals]:
    tables = set(connection.introspection.table_names())
    return [totals for totals in _ALL_TOTALS if totals.table in tables] if ENTRY_TABLE in tables else []


def stats_recount(connection=default_connection) -> None:
    """Count every scope and term again from the entries (after triggers
    were missing)."""
    with connection.cursor() as cursor:
        for totals in _present(connection):
            for sql in totals.recount(connection.vendor):
                cursor.execute(sql)


def stats_install(connection=default_connection) -> None:
    """Triggers in place and everything counted (the migrations' step): each
    kind of total whose table exists."""
    with connection.cursor() as cursor:
        for totals in _present(connection):
            if connection.vendor == "postgresql":
                for name in totals.postgres_functions:
                    for sql in _postgres_function_sql(name):
                        cursor.execute(sql)
            else:
                for sql in totals.sqlite_triggers.values():
                    cursor.execute(sql)
    stats_recount(connection)


def stats_ensure(connection=default_connection) -> bool:
    """SQLite: put back triggers a table rebuild dropped, and count again.
    Returns True when it had to."""
    if connection.vendor != "sqlite":
        return False
    wanted = {name for totals in _present(connection) for name in totals.sqlite_triggers}
    if not wanted:
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s "
                       "AND (name LIKE 'recall_stats_%%' OR name LIKE 'recall_terms_%%')", [ENTRY_TABLE])
        if {row[0] for row in cursor.fetchall()} == wanted:
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


def term_counts(*, workspace_id: str, scope_tokens: Sequence[str], terms: Sequence[str]) -> dict[str, int]:
    """BM25's df of each term over the scopes, one indexed statement. A term
    too long to be counted (`TERM_MAX_CHARS`) is taken as found once: such
    a run of characters is an id or a blob, rare by nature."""
    if not terms or not scope_tokens:
        return {t: 0 for t in terms}
    rows = RecallTermStats.objects.filter(workspace_id=workspace_id, scope_token__in=list(scope_tokens),
                                          term__in=[t for t in terms if len(t) <= TERM_MAX_CHARS]) \
        .values("term").annotate(n=Sum("entries")).values_list("term", "n")
    counts = dict(rows)
    return {t: counts.get(t, 0) if len(t) <= TERM_MAX_CHARS else 1 for t in terms}
