"""Hand-written reads answered as the ORM would answer them: rows through
the fields' converters, JSON columns decoded (or passed on unread)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson
from django.db import connection, models


class StoredJson:
    """A JSON column's text as the database gave it, for an answer that only
    passes the value on: the API's renderer writes the text into the answer
    as it is, instead of it being decoded here to be encoded again there.
    Both databases hold
    valid JSON text (jsonb's own, or what Django's field wrote). `value()`
    decodes it, for whatever needs the value after all."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def value(self) -> Any:
        return json_column(self.text)

    def __eq__(self, other: object) -> bool:
        return self.value() == (other.value() if isinstance(other, StoredJson) else other)

    __hash__ = None  # type: ignore[assignment]  # compared by value, like the dict or list it holds

    def __repr__(self) -> str:
        return f"StoredJson({self.text!r})"


def json_text(value: Any) -> Any:
    """`json_column`'s value left unread (`StoredJson`); a value the driver
    already decoded is passed as it is."""
    return StoredJson(value) if isinstance(value, str) else value


def json_column(value: Any) -> Any:
    """A JSON column's value as a hand-written statement reads it: Django has
    both databases answer JSON as text (its field decodes it), so decode here
    as the field would. orjson reads the same values several times faster,
    but not every one: an integer past 64
    bits, which a jsonb column may hold, it reads as a float, and a number
    past a float's range or a lone surrogate escape it refuses. Text that
    could hold such an integer (a run of 19 digits) or that orjson refuses
    is read by `json.loads`, so the values are the field's own."""
    if not isinstance(value, str):
        return value
    if _LONG_DIGIT_RUN.search(value) is None:
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            pass
    return json.loads(value)


# 19 digits: the shortest integer that may fall outside orjson's exact range
# (-2**63 .. 2**64-1); a match in a string or a fraction only costs the
# slower decoder.
_LONG_DIGIT_RUN = re.compile(r"\d{19}")


def model_rows(model: type[models.Model], names: Sequence[str], sql: str, params: Iterable[Any]) -> list[dict[str, Any]]:
    """The rows of `sql`, which selects the columns of `model`'s fields
    `names` in that order, as `values(*names)` answers them: each value
    through the converters the ORM applies (the backend's, then the field's:
    JSON decoded, datetimes aware). For a hot read whose statement the ORM
    takes longer to build than the database to run."""
    return [dict(zip(names, row, strict=True)) for row in _converted_rows(model, names, sql, params)]


def model_objects(model: type[models.Model], sql: str, params: Iterable[Any]) -> list[models.Model]:
    """Instances of `model` from `sql`, which selects every concrete column in
    field order (`select_list(model)`), built as a queryset builds them: for a
    read whose statement the ORM takes longer to compile than to run."""
    names = tuple(field.attname for field in model._meta.concrete_fields)
    return [model.from_db(connection.alias, names, row)
            for row in _converted_rows(model, names, sql, params)]


def _converted_rows(model: type[models.Model], names: Sequence[str], sql: str, params: Iterable[Any]) -> list[list[Any]]:
    converters = _converters(model, tuple(names), connection.ops)
    with connection.cursor() as cursor:
        cursor.execute(sql, list(params))
        rows = [list(row) for row in cursor.fetchall()]
    for row in rows:
        for index, expression, functions in converters:
            value = row[index]
            for function in functions:
                value = function(value, expression, connection)
            row[index] = value
    return rows


@functools.lru_cache(maxsize=64)
def _converters(model: type[models.Model], names: tuple[str, ...], ops: Any) -> list[tuple[int, Any, list[Callable]]]:
    """`model_rows`' converters, per column that has any: found once per
    (model, columns) and connection (they are the backend's own methods)."""
    fields = [model._meta.get_field(name) for name in names]
    converters = []
    for index, field in enumerate(fields):
        expression = field.get_col(model._meta.db_table)
        functions = [*ops.get_db_converters(expression), *field.get_db_converters(ops.connection)]
        if functions:
            converters.append((index, expression, functions))
    return converters


def fetch_one(sql: str, params: Iterable[Any]) -> tuple[Any, ...] | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, list(params))
        return cursor.fetchone()
