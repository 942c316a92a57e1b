"""Names and fragments of SQL built from model metadata: tables, columns
(quoted by the backend), parameter lists, conflict clauses."""

# ruff: noqa: S608
from __future__ import annotations

import re
from collections.abc import Sequence

from django.db import connection, models


def table(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def column(model: type[models.Model], name: str) -> str:
    return connection.ops.quote_name(model._meta.get_field(name).column)


def placeholders(count: int) -> str:
    """`count` parameter markers, comma-separated (an IN list's, a row's)."""
    return ", ".join(["%s"] * count)


_TYPE_MODIFIER_RE = re.compile(r"\(\d+(?:,\s*\d+)?\)")


def cast_type(field: models.Field) -> str:
    """The PostgreSQL type a column's values travel in, without the column's
    length: an explicit cast to varchar(n) would cut a long value silently,
    where the INSERT's own assignment refuses it."""
    return _TYPE_MODIFIER_RE.sub("", field.db_type(connection))


def on_conflict_sql(model: type[models.Model], target: Sequence[str], *, update: Sequence[str] = (),
                    update_where: str = "") -> str:
    """`ON CONFLICT (target) DO NOTHING`, or `DO UPDATE SET` the `update`
    fields to the excluded row's (where `update_where` holds, an SQL condition
    that may name `excluded.`): the same text on SQLite and PostgreSQL."""
    conflict = f"ON CONFLICT ({', '.join(column(model, name) for name in target)})"
    if not update:
        return f"{conflict} DO NOTHING"
    sets = ", ".join(f"{column(model, name)} = excluded.{column(model, name)}" for name in update)
    return f"{conflict} DO UPDATE SET {sets}" + (f" WHERE {update_where}" if update_where else "")


def select_list(model: type[models.Model]) -> str:
    """Every concrete column of `model`, qualified by its table, in field order."""
    return ", ".join(f"{table(model)}.{connection.ops.quote_name(field.column)}"
                     for field in model._meta.concrete_fields)
