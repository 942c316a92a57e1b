"""SQL the ORM does not write for the hot paths: one multi-row INSERT, and
UPDATE ... RETURNING (both SQLite >= 3.35 and PostgreSQL have it), and a
cursor that runs the hot statements prepared on PostgreSQL.

Values go through each field's own `get_db_prep_save`, so JSON, datetimes and
binary columns are stored exactly as the ORM would store them.
"""

# SQL here is built from model metadata (table and column names, quoted by the
# backend); every value is a bound parameter.
# ruff: noqa: S608
from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import connection, models

# Bind parameters per statement: PostgreSQL's protocol allows 65,535; SQLite
# since 3.32 allows 32,766 (Django assumes the old 999, which would split a
# batch of 100 messages into two INSERTs).
MAX_PARAMS = {"postgresql": 65_535, "sqlite": 32_766}


def _params_cap() -> int:
    return MAX_PARAMS.get(connection.vendor, 999)


def table(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def column(model: type[models.Model], name: str) -> str:
    return connection.ops.quote_name(model._meta.get_field(name).column)


def insert_rows(
    objs: Sequence[models.Model],
    *,
    on_conflict: Sequence[str] | None = None,
    update: Sequence[str] = (),
    update_where: str = "",
) -> int:
    """INSERT `objs` (all of one model, primary keys set or auto) in as few
    statements as the parameter cap allows: one for any batch the API accepts.

    Fields with a Python default or `auto_now_add` must already be set on the
    objects (`Model()` fills defaults; set timestamps explicitly). With
    `on_conflict` (the fields of a unique constraint) a colliding row is
    skipped, or, with `update`, overwrites those fields of the stored row
    (where `update_where` holds, an SQL condition that may name `excluded.`).
    Returns the rows sent.
    """
    if not objs:
        return 0
    model = type(objs[0])
    fields = [f for f in model._meta.concrete_fields if not (f.primary_key and isinstance(f, models.AutoField))]
    per_row = len(fields)
    rows_per_statement = max(1, _params_cap() // per_row)
    names = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    suffix = ""
    if on_conflict:
        target = ", ".join(column(model, name) for name in on_conflict)
        if update:
            sets = ", ".join(f"{column(model, name)} = excluded.{column(model, name)}" for name in update)
            suffix = f" ON CONFLICT ({target}) DO UPDATE SET {sets}" + (f" WHERE {update_where}" if update_where else "")
        else:
            suffix = f" ON CONFLICT ({target}) DO NOTHING"
    placeholder = "(" + ", ".join(["%s"] * per_row) + ")"
    with connection.cursor() as cursor:
        for start in range(0, len(objs), rows_per_statement):
            chunk = objs[start : start + rows_per_statement]
            params: list[Any] = []
            for obj in chunk:
                params.extend(f.get_db_prep_save(getattr(obj, f.attname), connection) for f in fields)
            sql = f"INSERT INTO {table(model)} ({names}) VALUES {', '.join([placeholder] * len(chunk))}{suffix}"
            cursor.execute(sql, params)
    return len(objs)


_TYPE_MODIFIER_RE = re.compile(r"\(\d+(?:,\s*\d+)?\)")


def record_type(field: models.Field) -> str:
    """The PostgreSQL type a column's values travel in, without the column's
    length: an explicit cast to varchar(n) would cut a long value silently,
    where the INSERT's own assignment refuses it."""
    return _TYPE_MODIFIER_RE.sub("", field.db_type(connection))


def json_recordset(fields: Sequence[models.Field], alias: str = "v", *, ordinality: bool = False) -> str:
    """PostgreSQL: the rows of one JSON parameter (`json_records`) as a table,
    `alias` with a column `v_<column>` per field (and `v_n`, the row's position
    from 1, with `ordinality`). One parameter whatever the number of rows, so
    the statement's text, and its prepared plan, is the same for 1 row or 100;
    Python encodes the rows in one C-accelerated `json.dumps`, where binding an
    array per column converted every value in Python."""
    types = ", ".join(f"{connection.ops.quote_name(f.column)} {record_type(f)}" for f in fields)
    names = [f"v_{f.column}" for f in fields] + (["v_n"] if ordinality else [])
    return (f"ROWS FROM (jsonb_to_recordset(%s::jsonb) AS ({types})){' WITH ORDINALITY' if ordinality else ''} "
            f"AS {alias} ({', '.join(names)})")


def json_records(fields: Sequence[models.Field], rows: Iterable[Sequence[Any]]) -> str:
    """The JSON parameter of `json_recordset`: `rows` (Python values in
    `fields` order) as objects keyed by column, each value in the text form
    its column's type reads (a JSON column's value nested as it is)."""
    encoders = [_record_encoder(f) for f in fields]
    keys = [f.column for f in fields]
    records = []
    for row in rows:
        record = {}
        for key, encode, value in zip(keys, encoders, row, strict=True):
            record[key] = encode(value) if encode is not None and value is not None else value
        records.append(record)
    return json.dumps(records, separators=(",", ":"))


# Values that JSON does not carry as the column reads them: timestamps in ISO
# 8601 (with their offset and microseconds), bytes in bytea's hex input form,
# decimals as text so no digit is lost to a float.
_RECORD_ENCODERS: dict[str, Any] = {
    "DateTimeField": lambda value: value.isoformat(),
    "DateField": lambda value: value.isoformat(),
    "TimeField": lambda value: value.isoformat(),
    "BinaryField": lambda value: "\\x" + bytes(value).hex(),
    "DecimalField": str,
}


def _record_encoder(field: models.Field) -> Any:
    encoder = getattr(field, "encoder", None)
    if field.get_internal_type() == "JSONField" and encoder is not None:
        # A field's own encoder decides what its custom values become.
        return lambda value: json.loads(json.dumps(value, cls=encoder))
    return _RECORD_ENCODERS.get(field.get_internal_type())


def json_column(value: Any) -> Any:
    """A JSON column's value as a hand-written statement reads it: Django has
    both databases answer JSON as text (its field decodes it), so decode here
    as the field would."""
    return json.loads(value) if isinstance(value, str) else value


def fetch_one(sql: str, params: Iterable[Any], *, prepared: bool = False) -> tuple[Any, ...] | None:
    with prepared_cursor() if prepared else connection.cursor() as cursor:
        cursor.execute(sql, list(params))
        return cursor.fetchone()


@contextmanager
def prepared_cursor() -> Iterator[Any]:
    """A cursor whose statements PostgreSQL plans once per connection and then
    only runs: for the few hot statements whose planning cost more than their
    execution (an append's CTE, a page's subqueries). Django binds values on
    the client and never prepares, which keeps every other query as it was.
    Elsewhere, or with `DB_PREPARED_STATEMENTS` off, an ordinary cursor."""
    if connection.vendor != "postgresql" or not settings.DB_PREPARED_STATEMENTS:
        with connection.cursor() as cursor:
            yield cursor
        return
    with server_binding_cursor(prepare=True) as cursor:
        yield cursor


@contextmanager
def server_binding_cursor(*, prepare: bool = False) -> Iterator[Any]:
    """PostgreSQL: a cursor that sends values as parameters (arrays in binary,
    no escaped literals written out in Python), wrapped as Django wraps its
    cursors, so statements are logged, counted and their errors translated.
    With `prepare`, each statement is also prepared (psycopg keeps the last
    100 per connection)."""
    connection.ensure_connection()
    with connection.wrap_database_errors:
        if prepare and connection.connection.prepare_threshold is None:
            # Django turns psycopg's preparing off (None), which also refuses
            # an explicit `prepare=True`; Django's own cursors bind on the
            # client and never prepare whatever the threshold.
            connection.connection.prepare_threshold = _ONLY_WHEN_ASKED
        raw = _server_binding_cursor_class(prepare)(connection.connection)
    with connection._prepare_cursor(raw) as cursor:
        yield cursor


# A threshold no statement reaches: only the preparing cursor's `prepare=True` prepares.
_ONLY_WHEN_ASKED = 2**62


@functools.cache
def _server_binding_cursor_class(prepare: bool) -> type:
    from django.db.backends.postgresql.base import ServerBindingCursor

    if not prepare:
        return ServerBindingCursor

    class PreparingCursor(ServerBindingCursor):
        """Binds values on the server and prepares each statement it runs."""

        def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: Any = None):
            return super().execute(query, params, prepare=True, binary=binary)

        def _send_query_prepared(self, name: bytes, pgq: Any, *, binary: Any = None) -> None:
            # psycopg records the statement only when it sends its text;
            # Django's query log (and `assertNumQueries`) reads it here.
            self._query = pgq
            super()._send_query_prepared(name, pgq, binary=binary)

    return PreparingCursor


def prefer_generic_plans(sender: Any, connection: Any, **kwargs: Any) -> None:
    """`connection_created` receiver: prepared statements are planned once,
    for any parameters. PostgreSQL otherwise re-plans a statement whose
    generic plan it estimates dearer (a page after a cursor was re-planned on
    every call). Only prepared statements are affected, and only the few of
    `prepared_cursor` are prepared. A SET rather than a startup option, which
    a pooler such as PgBouncer may refuse; the connection is in autocommit
    when this runs, so the setting holds for its life."""
    if connection.vendor == "postgresql" and settings.DB_PREPARED_STATEMENTS:
        with connection.cursor() as cursor:
            cursor.execute("SET plan_cache_mode = force_generic_plan")

