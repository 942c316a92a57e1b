"""Multi-row INSERTs (with ON CONFLICT) for the hot writes, in one statement
where the ORM's `bulk_create` would build one per batch. Inserted values are
stored exactly as the ORM would store them: on PostgreSQL in the text form
each column's type reads (`json_records`), on SQLite through each field's
own `get_db_prep_save`."""

# ruff: noqa: S608
from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection, models, transaction
from django.db.models.constants import OnConflict
from django.utils import timezone

from memory_project.db.records import json_records, json_recordset
from memory_project.db.sql import on_conflict_sql, placeholders, table

# Bind parameters per statement SQLite allows since 3.32 (Django assumes the
# old 999, which would split a batch of 100 messages into two INSERTs).
SQLITE_MAX_PARAMS = 32_766
# Where a SQLite INSERT's VALUES rows go (their number varies per call).
_ROWS = "<rows>"

# Column types whose SQLite form is not the Python value itself.
_PREPARED_TYPES = frozenset({"JSONField", "DateTimeField", "DateField", "TimeField", "BinaryField", "DecimalField"})


def _auto_time(field: models.Field) -> bool:
    return bool(getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False))


@dataclass(frozen=True)
class _Insert:
    sql: str
    fields: tuple[models.Field, ...]  # the columns, automatic time columns not named last
    timed: int  # automatic time columns filled for each row
    prepare: tuple[Callable | None, ...]  # SQLite: the fields' get_db_prep_save where needed


@functools.lru_cache(maxsize=128)
def _insert(model: type[models.Model], columns: tuple[str, ...], on_conflict: tuple[str, ...],
            update: tuple[str, ...], update_where: str, ignore_conflicts: bool, vendor: str) -> _Insert:
    """The INSERT for these columns and conflict handling, built once per
    process (the hot paths write the same few shapes again and again)."""
    fields = [model._meta.get_field(name) for name in columns]
    timed = [field for field in model._meta.concrete_fields if _auto_time(field) and field.attname not in columns]
    every = [*fields, *timed]
    names = ", ".join(connection.ops.quote_name(field.column) for field in every)
    if on_conflict:
        tail = on_conflict_sql(model, on_conflict, update=update, update_where=update_where)
        head = f"INSERT INTO {table(model)} ({names}) "
    else:
        ignore = OnConflict.IGNORE if ignore_conflicts else None
        head = f"{connection.ops.insert_statement(on_conflict=ignore)} {table(model)} ({names}) "
        tail = connection.ops.on_conflict_suffix_sql(fields, ignore, None, None)
    if vendor == "postgresql":
        # The rows as one JSON parameter: the statement stays short whatever
        # the number of rows (a VALUES list of hundreds of placeholders cost
        # more to build and parse than the rows cost to store).
        sql = f"{head}SELECT * FROM {json_recordset(every)} {tail}"
    else:
        # Multi-row VALUES, as many rows to a statement as the parameter cap allows.
        sql = f"{head}VALUES {_ROWS} {tail}"
    prepare = tuple(_sqlite_preparer(field) if field.get_internal_type() in _PREPARED_TYPES else None
                    for field in every)
    return _Insert(sql=sql, fields=tuple(every), timed=len(timed), prepare=prepare)


def _sqlite_preparer(field: models.Field) -> Callable:
    """The field's `get_db_prep_save`, with a shortcut for what the hot
    writes store most: an aware timestamp, which SQLite keeps as the UTC time
    written out (`str` of the naive UTC datetime, exactly as Django's
    `adapt_datetimefield_value` writes it), without the field's checks that
    an aware value never needs. Anything else goes to the field."""
    prepare = field.get_db_prep_save
    if field.get_internal_type() != "DateTimeField":
        return prepare

    def prepare_datetime(value: Any, connection: Any) -> Any:
        if type(value) is datetime and value.tzinfo is not None and connection.timezone_name == "UTC":
            return str(value.astimezone(UTC).replace(tzinfo=None))
        return prepare(value, connection)

    return prepare_datetime


def insert_rows(
    model: type[models.Model],
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    on_conflict: Sequence[str] = (),
    update: Sequence[str] = (),
    update_where: str = "",
    ignore_conflicts: bool = False,
) -> int:
    """INSERT `rows` (tuples in `columns` order, attribute names such as
    `workspace_id`) into `model`'s table in one statement (on SQLite, one per
    `SQLITE_MAX_PARAMS` values). Automatic time
    columns not named get the time of the call plus the row's position in
    microseconds, so rows keep their list order when sorted by time (as
    consecutive `pre_save` calls did). Fields with another default must be
    named.

    With `on_conflict` (the fields of a unique constraint) a colliding row is
    skipped or, with `update`, overwrites those fields of the stored row
    (where `update_where` holds, an SQL condition that may name `excluded.`);
    `ignore_conflicts` skips a row colliding with any constraint. Returns the
    number of rows sent."""
    if not rows:
        return 0
    statement = _insert(model, tuple(columns), tuple(on_conflict), tuple(update), update_where, ignore_conflicts,
                        connection.vendor)
    now = timezone.now()

    def values(index: int, row: Sequence[Any]) -> list[Any]:
        if not statement.timed:
            return list(row)
        return [*row, *([now + timedelta(microseconds=index)] * statement.timed)]

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(statement.sql, [json_records(statement.fields, (values(i, row) for i, row in enumerate(rows)))])
        return len(rows)
    prepared = [(position, prep) for position, prep in enumerate(statement.prepare) if prep is not None]
    # The connection itself, not the proxy `connection` (which looks it up
    # on every attribute read): the preparers below read it per value.
    wrapper = transaction.get_connection()
    per_row = len(statement.fields)
    rows_per_statement = max(1, SQLITE_MAX_PARAMS // per_row)
    placeholder = f"({placeholders(per_row)})"
    # More rows than one statement takes: all or none, as one statement would be.
    atomic = transaction.atomic() if len(rows) > rows_per_statement else contextlib.nullcontext()
    with atomic, connection.cursor() as cursor:
        for start in range(0, len(rows), rows_per_statement):
            chunk = rows[start:start + rows_per_statement]
            params: list[Any] = []
            for index, row in enumerate(chunk, start):
                row_values = values(index, row)
                for position, prep in prepared:
                    if row_values[position] is not None:
                        row_values[position] = prep(row_values[position], wrapper)
                params.extend(row_values)
            cursor.execute(statement.sql.replace(_ROWS, ", ".join([placeholder] * len(chunk))), params)
    return len(rows)


def new_object(model: type[models.Model], **values: Any) -> models.Model:
    """`model(**values)` for a row about to be inserted, built as Django
    builds a row it reads: positionally, about twice as fast
    (bench/README.md). `values` by attribute name
    (`workspace_id`, not `workspace`); every field not named gets its
    default (None for an automatic key)."""
    args = [values.pop(field.attname) if field.attname in values else field.get_default()
            for field in model._meta.concrete_fields]
    if values:
        raise TypeError(f"{model.__name__} has no fields {sorted(values)}")
    return model(*args)


def insert_objects(
    objects: Sequence[models.Model],
    *,
    on_conflict: Sequence[str] = (),
    update: Sequence[str] = (),
    update_where: str = "",
    ignore_conflicts: bool = False,
) -> int:
    """`bulk_create` for model instances (all of one model) whose primary
    keys are set or automatic: every concrete column in one INSERT, with
    `insert_rows`'s conflict handling. Automatic time columns left empty are
    set on the objects as `insert_rows` fills them; ones already set are kept."""
    if not objects:
        return 0
    model = type(objects[0])
    fields = [field for field in model._meta.concrete_fields
              if not (field.primary_key and isinstance(field, models.AutoField) and objects[0].pk is None)]
    timed = [field for field in fields if _auto_time(field)]
    if timed:
        now = timezone.now()
        for index, obj in enumerate(objects):
            for field in timed:
                if getattr(obj, field.attname) is None:
                    setattr(obj, field.attname, now + timedelta(microseconds=index))
    columns = [field.attname for field in fields]
    return insert_rows(model, columns, [[getattr(obj, name) for name in columns] for obj in objects],
                       on_conflict=on_conflict, update=update, update_where=update_where,
                       ignore_conflicts=ignore_conflicts)
