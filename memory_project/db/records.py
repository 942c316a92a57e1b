"""PostgreSQL: many rows as one JSON parameter read as a table
(`json_recordset`), and that parameter written from Python values
(`json_records`)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson
from django.db import connection, models

from memory_project.db.sql import cast_type


def json_recordset(fields: Sequence[models.Field], alias: str = "v", *, ordinality: bool = False) -> str:
    """PostgreSQL: the rows of one JSON parameter (`json_records`) as a table,
    `alias` with a column `v_<column>` per field (and `v_n`, the row's position
    from 1, with `ordinality`). One parameter whatever the number of rows, so
    the statement's text is the same for 1 row or 100, and Python encodes
    the rows in one JSON document (psycopg converted an array per column
    value by value)."""
    types = ", ".join(f"{connection.ops.quote_name(f.column)} {cast_type(f)}" for f in fields)
    names = [*record_names(fields), *(["v_n"] if ordinality else [])]
    return (f"ROWS FROM (jsonb_to_recordset(%s::jsonb) AS ({types})){' WITH ORDINALITY' if ordinality else ''} "
            f"AS {alias} ({', '.join(names)})")


def record_names(fields: Sequence[models.Field]) -> list[str]:
    """The names `json_recordset` gives the fields' columns."""
    return [f"v_{f.column}" for f in fields]


def json_records(fields: Sequence[models.Field], rows: Iterable[Sequence[Any]]) -> str:
    """The JSON parameter of `json_recordset`: `rows` (Python values in
    `fields` order) as objects keyed by column, each value in the text form
    its column's type reads (a JSON column's value nested as it is). Values
    must already be of the column's Python type (an int for an integer
    column): unlike the ORM's `get_db_prep_save`, nothing is coerced."""
    keys, encoded = _record_shape(tuple(fields))
    records = []
    for row in rows:
        if encoded:
            row = list(row)
            for index, encode in encoded:
                if row[index] is not None:
                    row[index] = encode(row[index])
        records.append(dict(zip(keys, row, strict=True)))
    try:
        # The same document as json.dumps writes, an order of magnitude faster.
        return orjson.dumps(records, option=_ORJSON_AS_JSON).decode()
    except TypeError:  # orjson.JSONEncodeError is one
        # What orjson would write differently: an integer past 64 bits, or a
        # type json.dumps refuses or writes its own way (passed through to here).
        return json.dumps(records, separators=(",", ":"))


# Subclasses are not passed through: orjson writes a str or int subclass (the
# models' choices, such as `MemoryType.FACT`, are str enums) exactly as
# json.dumps does, where passed through every row of a kind or a status went
# the slow way. A dict subclass it writes as its items (a `QueryDict` would
# differ); the JSON values written here were decoded from JSON, plain dicts.
_ORJSON_AS_JSON = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


@functools.lru_cache(maxsize=128)
def _record_shape(fields: tuple[models.Field, ...]) -> tuple[tuple[str, ...], tuple[tuple[int, Callable], ...]]:
    """`json_records`' keys, and the position and encoder of each column
    whose values need one: found once per set of columns."""
    encoders = [(index, _record_encoder(field)) for index, field in enumerate(fields)]
    return tuple(field.column for field in fields), tuple((i, e) for i, e in encoders if e is not None)


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
