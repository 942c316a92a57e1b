"""Where user text lives: one registry of every column that can hold text a
user or agent supplied, or text derived from it, and how each is erased.

Each app declares its own models' columns in `<app>/user_text.py`, beside its
models (Django's own apps are declared in `accounts/user_text.py`). A column is
either declared with the way it is erased, or marked as holding no user text
(ids, hashes, choices, operators' own data). `tests/test_user_text_registry.py`
walks every concrete model's text, JSON and binary columns and fails on one
that is neither, so a table added later cannot escape erasure unnoticed.

Readers of the registry: `memories.services.text_sweep` (redact a text
everywhere and count where it is), `memory_project.erasure` (the tables an
erasure rewrites on disk), `accounts.backup` (a copy of a workspace re-issues
the ids inside every column but the verbatim ones), and the planted-secret
scan of the test suite.

A column is `verbatim` when it holds what a caller wrote exactly as written
(a message, a memory's content, a framework's serialized state): nothing
rewrites it, not even a copy that re-issues the ids its text may mention.

How a column is erased (`Erase`):

- `LINEAGE`: the column's owner is erased through lineage (a message edited or
  deleted, a memory redacted and replaced): the text and everything derived
  from it go, each change a version with its actor.
- `SCRUB`: the text is replaced in place by the redaction mark (in a string,
  and in a JSON document's keys and values).
- `DELETE_ROW`: an opaque value (a serialized blob): the row holding the text is
  deleted.
- `REBUILD`: an index entry or cache made from another column: dropped or
  rebuilt when its source changes, and purged from the index's storage.
- `CLEAR`: a derived summary: emptied and re-derived from what remains.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.apps import apps
from django.db import models
from django.utils.module_loading import autodiscover_modules


class Erase(enum.StrEnum):
    LINEAGE = "lineage"
    SCRUB = "scrub"
    DELETE_ROW = "delete_row"
    REBUILD = "rebuild"
    CLEAR = "clear"


@dataclass(frozen=True)
class TextColumn:
    model: str  # app_label.ModelName
    field: str
    erase: Erase

    @property
    def model_class(self) -> type[models.Model]:
        return apps.get_model(self.model)

    @property
    def table(self) -> str:
        return self.model_class._meta.db_table


@dataclass(frozen=True)
class IndexTable:
    """A table outside the ORM holding user text (a full-text index)."""

    table: str
    source: str  # the column it is built from, app_label.ModelName.field
    erase: Erase = Erase.REBUILD


_columns: dict[tuple[str, str], TextColumn] = {}
_no_user_text: set[tuple[str, str]] = set()
_verbatim: set[tuple[str, str]] = set()
_index_tables: dict[str, IndexTable] = {}
_loaded = False


def declare(model: str, *, erase: dict[str, Erase] | None = None, no_user_text: Iterable[str] = (),
            verbatim: Iterable[str] = ()) -> None:
    """Declare a model's columns: `erase` maps a field that can hold user text
    to how it is erased; `no_user_text` names fields that cannot; `verbatim`
    names those of `erase` kept exactly as the caller wrote them."""
    for name, how in (erase or {}).items():
        _columns[(model, name)] = TextColumn(model, name, Erase(how))
    for name in verbatim:
        if (model, name) not in _columns:
            raise ValueError(f"{model}.{name}: a verbatim column is a declared user-text column")
        _verbatim.add((model, name))
    for name in no_user_text:
        _no_user_text.add((model, name))


def declare_index(table: str, *, source: str, erase: Erase = Erase.REBUILD) -> None:
    _index_tables[table] = IndexTable(table, source, erase)


def _load() -> None:
    global _loaded
    if not _loaded:
        autodiscover_modules("user_text")
        _loaded = True


def text_columns(erase: Erase | None = None) -> list[TextColumn]:
    _load()
    return [column for column in _columns.values() if erase is None or column.erase == erase]


def index_tables() -> list[IndexTable]:
    _load()
    return list(_index_tables.values())


def is_verbatim(model: str, field: str) -> bool:
    _load()
    return (model, field) in _verbatim


def is_declared(model: str, field: str) -> bool:
    _load()
    return (model, field) in _columns or (model, field) in _no_user_text


def user_text_tables() -> list[str]:
    """Every table holding user text, index tables included."""
    return sorted({column.table for column in text_columns()} | {index.table for index in index_tables()})


TEXT_FIELD_TYPES = (models.CharField, models.TextField, models.JSONField, models.BinaryField)


def undeclared_columns() -> Iterator[str]:
    """`app_label.Model.field` of each text, JSON or binary column of a concrete
    model that is neither declared nor marked as holding no user text."""
    _load()
    for model in apps.get_models(include_auto_created=True):
        if model._meta.proxy or model._meta.abstract or not model._meta.managed:
            continue
        for field in model._meta.concrete_fields:
            if isinstance(field, TEXT_FIELD_TYPES) and not is_declared(model._meta.label, field.name):
                yield f"{model._meta.label}.{field.name}"
