"""`memory_project.db.prepared_cursor`: on PostgreSQL one psycopg cursor per
connection serves every prepared statement, and still behaves as a cursor
Django made (statements counted, errors translated)."""

from __future__ import annotations

import pytest
from django.db import DataError, connection
from django.test.utils import CaptureQueriesContext

from memory_project.db import prepared_cursor

pytestmark = pytest.mark.django_db(transaction=True)


def _answer(sql: str, params: list) -> list[tuple]:
    with prepared_cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _raw_cursor() -> object:
    with prepared_cursor() as cursor:
        return cursor.cursor


def test_statements_are_answered_and_counted_as_django_counts_them():
    with CaptureQueriesContext(connection) as captured:
        assert _answer("SELECT CAST(%s AS INTEGER) + 1", [1]) == [(2,)]
        assert _answer("SELECT %s", ["two"]) == [("two",)]
    assert len(captured.captured_queries) == 2


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_one_psycopg_cursor_serves_the_connection_until_it_is_closed():
    first = _raw_cursor()
    _answer("SELECT 1", [])
    assert _raw_cursor() is first
    assert not first.closed  # leaving the block does not close it

    connection.close()
    assert _answer("SELECT 2", []) == [(2,)]
    again = _raw_cursor()
    assert again is not first
    assert again.connection is connection.connection


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_a_failed_statement_is_a_django_error_and_the_cursor_goes_on():
    with pytest.raises(DataError):
        _answer("SELECT 1 / %s::int", [0])
    assert _answer("SELECT %s::int * 2", [21]) == [(42,)]
