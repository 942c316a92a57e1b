"""Recall vectors in PostgreSQL's `vector` extension (pgvector), where the
database has it.

The entry table then has one more column, `embedding_vector` (type `vector`,
no fixed size, so a provider of any size fits), beside the float16 bytes the
in-process path reads. For the configured provider's size there is an HNSW
index on `embedding_vector::vector(<dims>)` (cosine), partial to rows of that
size, and a query's nearest entries are found in the database, filtered by
workspace, scope tokens and model.

The column is not a model field: the migration adds it only when the
extension can be installed (the server's own PostgreSQL may lack it), and
`vector_index_ensure` (after every `migrate`) adds the index for the current
provider and fills the column of entries embedded before it existed.
"""

# Every name in this SQL is a module constant or an integer; values are
# bound parameters.
# ruff: noqa: S608
from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
from django.conf import settings
from django.db import connection as default_connection

import memories.recall.embeddings as embeddings

logger = logging.getLogger(__name__)

ENTRY_TABLE = "memories_recallentry"
COLUMN = "embedding_vector"
# Entries whose column is filled per statement when the index is first made.
BACKFILL_CHUNK = 1000

_column_known: dict[str, bool] = {}


def extension_available(connection=default_connection) -> bool:
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        return cursor.fetchone() is not None


def column_add(connection=default_connection) -> bool:
    """The extension and the column, when the database offers the extension
    (the migration's step; a no-op elsewhere). Returns whether they are there."""
    if not extension_available(connection):
        return False
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
        cursor.execute(f"ALTER TABLE {ENTRY_TABLE} ADD COLUMN IF NOT EXISTS {COLUMN} vector")
    _column_known.clear()
    return True


def column_drop(connection=default_connection) -> None:
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {ENTRY_TABLE} DROP COLUMN IF EXISTS {COLUMN}")
    _column_known.clear()


def has_column(connection=default_connection) -> bool:
    """Whether this database keeps vectors in pgvector (asked once per
    process and database)."""
    if connection.vendor != "postgresql":
        return False
    key = f"{connection.alias}:{connection.settings_dict['NAME']}"
    known = _column_known.get(key)
    if known is None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s "
                           "AND NOT attisdropped", [ENTRY_TABLE, COLUMN])
            known = _column_known[key] = cursor.fetchone() is not None
    return known


def index_name(dims: int) -> str:
    return f"recall_vector_hnsw_{int(dims)}"


def _cast(dims: int) -> str:
    return f"{COLUMN}::vector({int(dims)})"


def vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{float(x):.6g}" for x in np.asarray(vector, dtype=np.float32).ravel()) + "]"


def vector_index_ensure(connection=default_connection) -> bool:
    """The HNSW index for the configured provider's size, and the column of
    entries embedded without it filled. No-op without the column or a
    provider. Returns True when the index was created."""

    if not has_column(connection):
        return False
    provider = embeddings.get_embedding_provider()
    if provider is None:
        return False
    dims = int(provider.dims)
    _backfill(connection)
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [index_name(dims)])
        if cursor.fetchone() is not None:
            return False
        cursor.execute(f"CREATE INDEX IF NOT EXISTS {index_name(dims)} ON {ENTRY_TABLE} USING hnsw "
                       f"(({_cast(dims)}) vector_cosine_ops) "
                       f"WITH (m = {int(settings.PGVECTOR_HNSW_M)}, "
                       f"ef_construction = {int(settings.PGVECTOR_HNSW_EF_CONSTRUCTION)}) "
                       f"WHERE vector_dims({COLUMN}) = {dims}")
    return True


def _backfill(connection) -> int:

    done = 0
    while True:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id, embedding FROM {ENTRY_TABLE} WHERE embedding IS NOT NULL "
                           f"AND {COLUMN} IS NULL ORDER BY id LIMIT %s", [BACKFILL_CHUNK])
            rows = cursor.fetchall()
            if not rows:
                return done
            cursor.executemany(f"UPDATE {ENTRY_TABLE} SET {COLUMN} = %s::vector WHERE id = %s",
                               [(vector_literal(embeddings.bytes_to_vector(bytes(blob))), pk) for pk, blob in rows])
        done += len(rows)


def vectors_write(pairs: Sequence[tuple[int, np.ndarray]], *, model: str) -> None:
    """Each entry's vector, in both columns (the bytes serve the in-process
    path, `RECALL_VECTOR_INDEX=process`)."""

    with default_connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {ENTRY_TABLE} SET embedding = %s, embedding_model = %s, {COLUMN} = %s::vector WHERE id = %s",
            [(embeddings.vector_to_bytes(vector), model, vector_literal(vector), pk) for pk, vector in pairs])


def vectors_clear(entry_ids: Sequence[int]) -> None:
    if not entry_ids:
        return
    with default_connection.cursor() as cursor:
        cursor.execute(f"UPDATE {ENTRY_TABLE} SET embedding = NULL, embedding_model = '', {COLUMN} = NULL "
                       f"WHERE id = ANY(%s)", [list(entry_ids)])


def nearest(*, workspace_id: str, scope_tokens: Sequence[str], model: str, query: np.ndarray, limit: int
            ) -> tuple[np.ndarray, np.ndarray]:
    """(entry ids, cosines) of the `limit` entries of these scopes nearest to
    `query` (unit length), best first: one statement. The planner takes the
    HNSW index for a large scope and the scopes' btree range (an exact
    search) for small ones. HNSW's settings come with the connection (see
    DATABASES in the settings)."""
    dims = int(query.shape[0])
    literal = vector_literal(query)
    with default_connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, 1 - ({_cast(dims)} <=> %s::vector({dims})) FROM {ENTRY_TABLE} "
            f"WHERE workspace_id = %s AND scope_token = ANY(%s) AND embedding_model = %s "
            f"AND vector_dims({COLUMN}) = {dims} ORDER BY {_cast(dims)} <=> %s::vector({dims}) LIMIT %s",
            [literal, workspace_id, list(scope_tokens), model, literal, limit])
        # A relaxed iterative scan may yield near-ties out of order.
        rows = sorted(cursor.fetchall(), key=lambda row: -row[1])
    ids = np.array([row[0] for row in rows], dtype=np.int64)
    scores = np.array([row[1] for row in rows], dtype=np.float32)
    return ids, scores
