"""`memory_project.db.insert_objects` stores each value exactly as the ORM's
own save stores it: the same column text on SQLite (timestamps written out in
UTC by a shortcut of the field's preparation), the same value on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from django.db import connection

from memories.models import MemoryItem
from memory_project.db import column, insert_objects, table

pytestmark = pytest.mark.django_db

MOMENTS = [
    datetime(2026, 3, 4, 5, 6, 7, 890123, tzinfo=UTC),
    datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC),  # no microseconds: written without them
    datetime(2026, 12, 31, 23, 30, 0, 5, tzinfo=timezone(timedelta(hours=5, minutes=30))),
    datetime(2026, 1, 1, 0, 0, 0, 999999, tzinfo=timezone(timedelta(hours=-8))),
]


def _item(workspace, n: int, moment: datetime) -> MemoryItem:
    return MemoryItem(id=f"mem_insert_{n}", workspace=workspace, scope="global", type="fact", content=f"value {n}",
                      sources=["msg_1", "msg_2"], last_used_at=moment, expires_at=moment, importance=0.25)


def _stored(ids: list[str]) -> dict[str, tuple]:
    """The columns as stored, read as text: SQLite compares timestamps as
    text, and its connection would parse them back into datetimes."""
    names = ("last_used_at", "expires_at", "sources", "importance")
    as_text = ", ".join(f"CAST({column(MemoryItem, n)} AS TEXT)" for n in names)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column(MemoryItem, 'id')}, {as_text} "  # noqa: S608
                       f"FROM {table(MemoryItem)} WHERE {column(MemoryItem, 'id')} IN ({', '.join(['%s'] * len(ids))})",
                       ids)
        return {row[0]: row[1:] for row in cursor.fetchall()}


def test_insert_objects_stores_what_the_orm_stores(workspace):
    bulk = [_item(workspace, n, moment) for n, moment in enumerate(MOMENTS)]
    insert_objects(bulk)
    saved = [_item(workspace, n + 100, moment) for n, moment in enumerate(MOMENTS)]
    for item in saved:
        item.save(force_insert=True)
    stored = _stored([item.pk for item in [*bulk, *saved]])
    for ours, theirs, moment in zip(bulk, saved, MOMENTS, strict=True):
        assert stored[ours.pk] == stored[theirs.pk]
        assert all(isinstance(value, str) for value in stored[ours.pk])
        read = MemoryItem.objects.get(pk=ours.pk)
        assert read.last_used_at == moment and read.expires_at == moment


def test_new_object_is_the_keyword_built_object(workspace):
    """`new_object` gives the object `Model(**values)` gives: every field
    named set, every other at its default."""
    from framework_state.models import Checkpoint
    from memory_project.db import new_object

    values = {"checkpoint_id": "c1", "type": "msgpack", "checkpoint": b"x", "parent_checkpoint_id": None}
    fast = new_object(Checkpoint, workspace_id=workspace.pk, **values)
    usual = Checkpoint(workspace_id=workspace.pk, **values)
    names = [field.attname for field in Checkpoint._meta.concrete_fields]
    assert [getattr(fast, name) for name in names] == [getattr(usual, name) for name in names]
    assert fast.pk is None and fast.checkpoint_ns == "" and fast.metadata == {} and fast._state.adding
    with pytest.raises(TypeError, match="no fields"):
        new_object(Checkpoint, workspace=workspace)


def test_json_records_write_what_json_dumps_writes():
    """The JSON parameter of a record set is the document json.dumps writes,
    also where orjson alone would differ (an integer past 64 bits, a str
    subclass, a datetime inside a JSON value, which json.dumps refuses)."""
    import json

    from django.utils.safestring import mark_safe

    from framework_state.models import Checkpoint
    from memory_project.db import json_records

    fields = [Checkpoint._meta.get_field(name) for name in ("checkpoint_id", "checkpoint", "metadata", "created_at")]
    moment = datetime(2026, 3, 4, 5, 6, 7, 890123, tzinfo=UTC)
    for metadata in ({"n": 1, "text": "héllo 你好", "list": [1.5, None, True]}, {"big": 2**70},
                     {"safe": mark_safe("<b>")}):
        written = json_records(fields, [["c1", b"\x00\xff", metadata, moment]])
        assert json.loads(written) == [{"checkpoint_id": "c1", "checkpoint": "\\x00ff", "metadata": metadata,
                                        "created_at": moment.isoformat()}]
    with pytest.raises(TypeError):
        json_records(fields, [["c1", b"", {"when": moment}, moment]])


def test_json_records_write_the_models_choices_without_json_dumps(monkeypatch):
    """The models' choices (str enums such as `MemoryType.FACT`) are written
    by orjson as their text: every row of the pipeline holds one, and
    json.dumps, which took them until now, is about ten times slower."""
    import enum
    import json

    from memories.models import MemoryType
    from memories.recall.models import RecallEntry, RecallKind
    from memory_project.db import records as db

    def refuse(*args, **kwargs):
        raise AssertionError("json.dumps was used")

    class Size(enum.IntEnum):
        TWO = 2

    fields = [RecallEntry._meta.get_field(name) for name in ("kind", "terms", "length")]
    rows = [[RecallKind.PASSAGE, " tea ", 1], [MemoryType.FACT, " x ", Size.TWO]]
    expected = json.dumps([dict(zip(("kind", "terms", "length"), row, strict=True)) for row in rows],
                          separators=(",", ":"))
    monkeypatch.setattr(db.json, "dumps", refuse)
    written = db.json_records(fields, rows)
    assert written == expected
    assert json.loads(written) == [{"kind": "passage", "terms": " tea ", "length": 1},
                                   {"kind": "fact", "terms": " x ", "length": 2}]


def test_json_column_reads_what_json_loads_reads():
    """A JSON column's text decodes to the values `json.loads` gives, also
    where orjson alone would not: an integer past 64 bits (which it reads as
    a float), a number past a float's range and a lone surrogate escape
    (which it refuses)."""
    import json

    from memory_project.db import json_column

    texts = [
        '{"a": 1, "b": [1.5, null, true, false], "c": "héllo 你好", "d": {}}',
        "[]", '"text"', "-0.0", "0.1000000000000000055511151231257827", "1E+2",
        str(2**64 - 1), str(-(2**63)), str(2**64), str(2**70), '{"id": 123456789012345678901234567890}',
        "1e400", '"\\ud800"', '{"a": 1, "a": 2}',
    ]
    for text in texts:
        decoded, expected = json_column(text), json.loads(text)
        assert decoded == expected and type(decoded) is type(expected), text
    assert json_column({"already": "decoded"}) == {"already": "decoded"}
    assert json_column(None) is None
