"""Substring search and relevance over memory items, one module per database quirk.

`q` means "this text occurs in the content (or fact key)", case-insensitively,
in any language: Chinese has no spaces, so word tokenizers are useless and
both backends index character trigrams instead.

- PostgreSQL: `pg_trgm` GIN indexes on `UPPER(content)` and `UPPER(fact_key)`
  (migration `0003_memory_search`). Django's `icontains` compiles to
  `UPPER(col) LIKE UPPER('%q%')`, which is exactly the indexed expression, so
  the planner answers `q` of 3+ characters from the index.
- SQLite: an FTS5 table with `tokenize='trigram'` in external-content mode (it
  stores the inverted index only, never a second copy of the text), kept in
  sync by triggers. `q` of 3+ characters is a `MATCH` on the quoted phrase;
  shorter `q` (two-character Chinese words such as 咖啡) cannot form a trigram
  and falls back to `LIKE`.

The external-content index addresses rows by the item table's implicit rowid.
Django rebuilds a SQLite table (dropping its triggers, renumbering rowids)
whenever a migration alters it, so `sqlite_index_ensure` runs after every
`migrate` and rebuilds the index when the triggers had gone missing.
"""

# SQL here is built from the module's constant table names only; every value
# that comes from a caller is a bound parameter.
# ruff: noqa: S608, S611
from __future__ import annotations

from django.db import connection as default_connection
from django.db.models import BooleanField, F, FloatField, Func, Q, QuerySet, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce, Greatest

from memories.fts5 import fts5_drop, fts5_ensure, fts5_optimize

ITEM_TABLE = "memories_memoryitem"
FTS_TABLE = "memories_memoryitem_fts"
MIN_TRIGRAM_CHARS = 3
# Relevance queries built from long text (a whole user message) keep this many
# distinct trigrams: enough to rank, bounded so the MATCH stays cheap.
MAX_RANK_TRIGRAMS = 64

_FTS_TRIGGERS = {
    f"{FTS_TABLE}_ai": f"""
        CREATE TRIGGER IF NOT EXISTS {FTS_TABLE}_ai AFTER INSERT ON {ITEM_TABLE} BEGIN
            INSERT INTO {FTS_TABLE}(rowid, content, fact_key) VALUES (new.rowid, new.content, new.fact_key);
        END""",
    f"{FTS_TABLE}_ad": f"""
        CREATE TRIGGER IF NOT EXISTS {FTS_TABLE}_ad AFTER DELETE ON {ITEM_TABLE} BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, content, fact_key)
            VALUES ('delete', old.rowid, old.content, old.fact_key);
        END""",
    # Only when the indexed text really changed: status or importance updates
    # must not re-tokenize 100 kB of content.
    f"{FTS_TABLE}_au": f"""
        CREATE TRIGGER IF NOT EXISTS {FTS_TABLE}_au AFTER UPDATE OF content, fact_key ON {ITEM_TABLE}
        WHEN old.content IS NOT new.content OR old.fact_key IS NOT new.fact_key BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, content, fact_key)
            VALUES ('delete', old.rowid, old.content, old.fact_key);
            INSERT INTO {FTS_TABLE}(rowid, content, fact_key) VALUES (new.rowid, new.content, new.fact_key);
        END""",
}


# --- index maintenance --------------------------------------------------------


def sqlite_index_ensure(connection=default_connection) -> bool:
    """Create the FTS5 table and its triggers if missing (SQLite only; idempotent).

    Returns True when the index had to be (re)built from the item table.
    """
    return fts5_ensure(
        connection, table=ITEM_TABLE, fts_table=FTS_TABLE, triggers=_FTS_TRIGGERS,
        create_sql=f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
                   f"content, fact_key, content='{ITEM_TABLE}', content_rowid='rowid', tokenize='trigram')",
    )


def sqlite_index_drop(connection=default_connection) -> None:
    fts5_drop(connection, fts_table=FTS_TABLE, triggers=_FTS_TRIGGERS)


def search_index_purge(connection=default_connection) -> None:
    """Physically drop what deleted or replaced text left in the search index.

    FTS5 records a change as a delete marker plus new entries; the old terms
    stay in older index segments until they are merged. `optimize` merges every
    segment into one, dropping the deleted entries for good. Redaction calls
    this so no fragment of redacted text survives in the SQLite index. (The
    PostgreSQL trigram index is maintained by the server; dead index entries go
    with VACUUM.)
    """
    fts5_optimize(connection, fts_table=FTS_TABLE)


def postgres_index_sql() -> list[str]:
    return [
        "CREATE EXTENSION IF NOT EXISTS pg_trgm",
        f"CREATE INDEX IF NOT EXISTS mem_content_trgm ON {ITEM_TABLE} USING gin (UPPER(content) gin_trgm_ops)",
        f"CREATE INDEX IF NOT EXISTS mem_fact_key_trgm ON {ITEM_TABLE} USING gin (UPPER(fact_key) gin_trgm_ops)",
    ]


# --- queries ------------------------------------------------------------------


def fts_phrase(text: str) -> str:
    """`text` as one FTS5 phrase: with the trigram tokenizer a phrase matches
    wherever the text occurs as a substring."""
    return '"' + text.replace('"', '""') + '"'


def search_filter(queryset: QuerySet, q: str, *, selective_filter: bool = False, paged: bool = False) -> QuerySet:
    """Items whose content or fact key contains `q` (case-insensitive substring).

    On SQLite, `selective_filter`: the list is also filtered by something
    that picks few rows (a scope id, a fact key, a source message); the query
    is then driven by that filter's index and `q` checked on its rows only.
    Otherwise SQLite reads `q`'s matches from the index once into a set.
    `paged`: the caller reads one page in the list's own order (the API's
    memory list), so the list's index is walked, keeping the rows in the set:
    a page costs about the reading of the matches, whatever the workspace's
    size (a text matching nothing walks the workspace's index: ~15 ms per
    100,000 rows). Without it SQLite may instead look each match up by rowid,
    which suits counting all matches (the admin's search) but sorts every
    match of the workspace for a page. Probing the index row by row cost a
    third of a millisecond or more per row. (PostgreSQL's planner weighs the
    trigram index against the other indexes from its statistics by itself.)
    """
    if q == "":
        return queryset
    vendor = default_connection.vendor
    if vendor == "sqlite" and len(q) >= MIN_TRIGRAM_CHARS:
        phrase = fts_phrase(q)
        if selective_filter:
            # Row-driven: a correlated probe of the index for each of the filter's rows.
            matched = RawSQL(
                f"EXISTS (SELECT 1 FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s "
                f"AND {FTS_TABLE}.rowid = {ITEM_TABLE}.rowid)",
                [phrase],
                output_field=BooleanField(),
            )
        else:
            # Index-driven: on the outer table's own rowid, so SQLite reads the
            # matches once into a set. For a page, the unary `+` keeps SQLite
            # from turning the set around into a look-up of every match by
            # rowid (then a sort of all the workspace's matches), which it
            # chose from its statistics.
            matched = RawSQL(
                f"{'+' if paged else ''}{ITEM_TABLE}.rowid IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s)",
                [phrase],
                output_field=BooleanField(),
            )
        return queryset.filter(matched)
    return queryset.filter(Q(content__icontains=q) | Q(fact_key__icontains=q))


def _trigrams(text: str) -> list[str]:
    folded = " ".join(text.lower().split())
    seen: dict[str, None] = {}
    for start in range(len(folded) - MIN_TRIGRAM_CHARS + 1):
        gram = folded[start : start + MIN_TRIGRAM_CHARS]
        if gram.strip():
            seen.setdefault(gram, None)
        if len(seen) >= MAX_RANK_TRIGRAMS:
            break
    return list(seen)


class _WordSimilarity(Func):
    function = "word_similarity"
    output_field = FloatField()


def search_rank(queryset: QuerySet, text: str, *, alias: str = "relevance") -> QuerySet:
    """Annotate each item with `alias`: how relevant it is to `text`, a float
    where 0 means unrelated and larger means more relevant (ranking only; the
    scale differs between databases, so compare scores, never store them).

    `text` may be a short query or a whole message. PostgreSQL uses pg_trgm's
    `word_similarity` in both directions (a short query found in a long memory,
    or a short memory found in a long message), in [0, 1]. SQLite uses FTS5's
    `bm25()` over the OR of the text's trigrams (negated, since bm25 is lower
    for better matches). Text shorter than a trigram (a one- or two-character
    Chinese word) scores by its number of occurrences on both databases.
    Does not filter: pair with `search_filter` for "must contain".
    """
    text = text.strip()
    if not text:
        return queryset.annotate(**{alias: Value(0.0, output_field=FloatField())})
    vendor = default_connection.vendor
    if vendor == "postgresql" and len(text) >= MIN_TRIGRAM_CHARS:
        score = Greatest(
            _WordSimilarity(Value(text), F("content")),
            _WordSimilarity(F("content"), Value(text)),
        )
        return queryset.annotate(**{alias: score})
    if vendor == "sqlite":
        grams = _trigrams(text)
        if grams:
            expression = " OR ".join(fts_phrase(gram) for gram in grams)
            score = RawSQL(
                f"SELECT -bm25({FTS_TABLE}) FROM {FTS_TABLE} "
                f"WHERE {FTS_TABLE} MATCH %s AND {FTS_TABLE}.rowid = {ITEM_TABLE}.rowid",
                [expression],
                output_field=FloatField(),
            )
            return queryset.annotate(**{alias: Coalesce(score, Value(0.0), output_field=FloatField())})
    # Short text (or another database): count occurrences, case-insensitively.
    needle = text.lower()
    occurrences = RawSQL(
        f"(LENGTH({ITEM_TABLE}.content) - LENGTH(REPLACE(LOWER({ITEM_TABLE}.content), %s, ''))) * 1.0 / %s",
        [needle, len(needle)],
        output_field=FloatField(),
    )
    return queryset.annotate(**{alias: occurrences})
