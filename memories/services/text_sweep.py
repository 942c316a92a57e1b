"""A text across every column of a workspace that can hold it, read from the
user-text registry (`memory_project.user_text`).

`text_sweep_count` says where a text is (for the redaction preview and its
report); `text_sweep_erase` erases it from the columns that are not erased
through lineage: it scrubs `SCRUB` columns in place (strings, and a JSON
document's keys and values) and deletes the rows of `DELETE_ROW` columns
(serialized blobs). `LINEAGE`, `CLEAR` and `REBUILD` columns are left to
lineage erasure (`memories.services.lineage.workspace_text_redact`), which
runs first. No column is named here: a column added to the registry is swept
without a change to this module.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.contrib.admin.models import LogEntry
from django.db import models
from django.db.models import Q, TextField
from django.db.models.functions import Cast

from accounts.backup import workspace_models
from memories.services.redaction import REDACTED_PLACEHOLDER, _workspace_log_entries
from memory_project.user_text import Erase, TextColumn, text_columns

_BATCH = 500


def _spellings(text: str) -> list[str]:
    """The text as stored: plain, and inside a JSON string (escaped, with
    non-ASCII characters kept or written as \\u escapes)."""
    return list(dict.fromkeys([text, json.dumps(text, ensure_ascii=False)[1:-1], json.dumps(text)[1:-1]]))


def _workspace_rows(model: type[models.Model], workspace) -> models.QuerySet | None:
    """The workspace's rows of `model`; None for a model no workspace owns."""
    if model is LogEntry:
        return _workspace_log_entries(workspace)
    for candidate, lookup in workspace_models():
        if candidate is model and lookup:
            return model._default_manager.filter(**{lookup: workspace})
    return None


def _holding(column: TextColumn, workspace, text: str) -> Iterator[tuple[Any, Any]]:
    """(pk, value) of the workspace's rows whose column holds the text."""
    model = column.model_class
    rows = _workspace_rows(model, workspace)
    if rows is None:
        return
    field = model._meta.get_field(column.field)
    spellings = _spellings(text)
    if isinstance(field, models.BinaryField):
        needles = [spelling.encode() for spelling in spellings]
        for pk, value in rows.values_list("pk", column.field).iterator(chunk_size=_BATCH):
            data = bytes(value) if value is not None else b""
            if any(needle in data for needle in needles):
                yield pk, value
        return
    if isinstance(field, models.JSONField):
        query = Q()
        for spelling in spellings:
            query |= Q(_swept__contains=spelling)
        rows = rows.annotate(_swept=Cast(column.field, TextField())).filter(query)
    else:
        rows = rows.filter(**{f"{column.field}__contains": text})
    yield from rows.values_list("pk", column.field).iterator(chunk_size=_BATCH)


def _scrub(value: Any, spellings: list[str]) -> Any:
    if isinstance(value, str):
        for spelling in spellings:
            value = value.replace(spelling, REDACTED_PLACEHOLDER)
        return value
    if isinstance(value, list):
        return [_scrub(element, spellings) for element in value]
    if isinstance(value, dict):
        return {_scrub(key, spellings): _scrub(element, spellings) for key, element in value.items()}
    return value


def text_sweep_count(*, workspace, text: str) -> dict[str, int]:
    """`table.column` -> how many of the workspace's rows hold the text, for
    every registered column (lineage-erased ones included)."""
    counts: dict[str, int] = {}
    for column in text_columns():
        found = sum(1 for _ in _holding(column, workspace, text))
        if found:
            counts[f"{column.table}.{column.field}"] = found
    return counts


def text_sweep_erase(*, workspace, text: str) -> dict[str, int]:
    """Scrub or delete the text in the workspace's `SCRUB` and `DELETE_ROW`
    columns; `table.column` -> rows changed. Call inside the erasure's transaction."""
    spellings = _spellings(text)
    changed: dict[str, int] = {}
    for column in text_columns():
        if column.erase not in (Erase.SCRUB, Erase.DELETE_ROW):
            continue
        model = column.model_class
        rows = list(_holding(column, workspace, text))
        if not rows:
            continue
        if column.erase == Erase.DELETE_ROW:
            model._default_manager.filter(pk__in=[pk for pk, _ in rows]).delete()
        else:
            for pk, value in rows:
                model._default_manager.filter(pk=pk).update(**{column.field: _scrub(value, spellings)})
        changed[f"{column.table}.{column.field}"] = len(rows)
    return changed
