"""Indexes the hot writes maintain on PostgreSQL: none that no query uses."""

from __future__ import annotations

import pytest
from django.db import connection

from conversations.models import Branch
from framework_state.models import CheckpointWrite

pytestmark = [pytest.mark.django_db, pytest.mark.skipif("connection.vendor != 'postgresql'")]


def _indexes(model) -> dict[str, list[str]]:
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, model._meta.db_table)
    return {name: spec["columns"] for name, spec in found.items() if spec["index"]}


def test_no_like_twins_on_write_and_branch_ids():
    # Nothing filters these by prefix; each LangGraph write row and new branch paid for them.
    for model in (CheckpointWrite, Branch):
        assert [name for name in _indexes(model) if name.endswith("_like")] == []


def test_a_workspace_still_finds_its_checkpoint_writes_by_index():
    # What deleting a workspace cascades through.
    assert ["workspace_id"] in _indexes(CheckpointWrite).values()
