"""Multi-row INSERTs without Django's per-value machinery, for the pipeline's
hot writes (an extraction batch writes dozens of items, versions, edges and
recall entries; `bulk_create` spent more time preparing their values than the
database spent storing them).

Values are stored exactly as `bulk_create` stores them: plain columns as
given, and the columns whose database form differs from the Python value
(JSON, datetimes, binary) through the field's own `get_db_prep_save`.
`auto_now` / `auto_now_add` columns left out get the time of the call plus the
row's position in microseconds, so rows keep their list order when sorted by
time (as consecutive `pre_save` calls did).
"""

# SQL here is built from model metadata only; every value is a bound parameter.
# ruff: noqa: S608
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import connection, models
from django.db.models.constants import OnConflict
from django.utils import timezone

from memory_project.db import json_records, json_recordset, server_binding_cursor

# Column types whose stored form is not the Python value itself.
_PREPARED_TYPES = frozenset({"JSONField", "DateTimeField", "DateField", "TimeField", "BinaryField", "DecimalField"})


def _auto_time(field: models.Field) -> bool:
    return bool(getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False))


@dataclass(frozen=True)
class _Statement:
    sql: str
    fields: tuple[models.Field, ...]  # the columns, automatic time columns last
    timed: int  # automatic time columns appended to each row
    prepare: tuple[Callable | None, ...]


@functools.lru_cache(maxsize=64)
def _statement(model: type[models.Model], columns: tuple[str, ...], ignore_conflicts: bool, vendor: str) -> _Statement:
    """The INSERT for these columns, built once per process (a batch writes
    the same few shapes again and again)."""
    fields = [model._meta.get_field(name) for name in columns]
    timed = [field for field in model._meta.concrete_fields if _auto_time(field) and field.attname not in columns]
    every = [*fields, *timed]
    names = ", ".join(connection.ops.quote_name(field.column) for field in every)
    on_conflict = OnConflict.IGNORE if ignore_conflicts else None
    head = (f"{connection.ops.insert_statement(on_conflict=on_conflict)} "
            f"{connection.ops.quote_name(model._meta.db_table)} ({names}) ")
    tail = connection.ops.on_conflict_suffix_sql(fields, on_conflict, None, None)
    if vendor == "postgresql":
        # The rows as one JSON parameter: the statement stays short whatever
        # the number of rows (a VALUES list of hundreds of placeholders cost
        # more to build and parse than the rows cost to store).
        sql = f"{head}SELECT * FROM {json_recordset(every)} {tail}"
    else:
        sql = f"{head}VALUES ({', '.join(['%s'] * len(every))}) {tail}"
    prepare = tuple(field.get_db_prep_save if field.get_internal_type() in _PREPARED_TYPES else None
                    for field in every)
    return _Statement(sql=sql, fields=tuple(every), timed=len(timed), prepare=prepare)


def insert_rows(model: type[models.Model], columns: Sequence[str], rows: Sequence[Sequence[Any]], *,
                ignore_conflicts: bool = False) -> int:
    """INSERT `rows` (tuples in `columns` order, attribute names such as
    `workspace_id`) into `model`'s table; automatic time columns not named are
    filled. Call inside the writing transaction. Returns the number of rows sent."""
    statement = _statement(model, tuple(columns), ignore_conflicts, connection.vendor)
    now = timezone.now()
    timed = [[now + timedelta(microseconds=index)] * statement.timed for index in range(len(rows))] \
        if statement.timed else None
    if connection.vendor == "postgresql":
        if not rows:
            return 0
        values = (row if timed is None else [*row, *timed[index]] for index, row in enumerate(rows))
        with server_binding_cursor() as cursor:
            cursor.execute(statement.sql, [json_records(statement.fields, values)])
        return len(rows)
    prepared = [(position, prep) for position, prep in enumerate(statement.prepare) if prep is not None]
    params: list[list[Any]] = []
    for index, row in enumerate(rows):
        values = [*row, *timed[index]] if timed is not None else list(row)
        for position, prep in prepared:
            if values[position] is not None:
                values[position] = prep(values[position], connection)
        params.append(values)
    if not params:
        return 0
    # One prepared statement that SQLite runs per row (no limit of 999
    # parameters to chunk around).
    with connection.cursor() as cursor:
        cursor.executemany(statement.sql, params)
    return len(params)


def insert_objects(objects: Sequence[models.Model], *, ignore_conflicts: bool = False) -> int:
    """`bulk_create` for model instances whose primary keys are set (or are
    automatic): every concrete column in one multi-row INSERT. Automatic time
    columns are set on the objects too, as `bulk_create` does."""
    if not objects:
        return 0
    model = type(objects[0])
    now = timezone.now()
    fields = [field for field in model._meta.concrete_fields
              if not (field.primary_key and isinstance(field, models.AutoField) and objects[0].pk is None)]
    timed = [field for field in fields if _auto_time(field)]
    for index, obj in enumerate(objects):
        moment = now + timedelta(microseconds=index)
        for field in timed:
            setattr(obj, field.attname, moment)
    columns = [field.attname for field in fields]
    return insert_rows(model, columns, [[getattr(obj, name) for name in columns] for obj in objects],
                       ignore_conflicts=ignore_conflicts)
