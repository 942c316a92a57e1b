"""`memory_project.db.statement_pipeline`: writes sent without waiting on
PostgreSQL, with the transaction's guarantees unchanged."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from accounts.models import Workspace
from memory_project.db import statement_pipeline

pytestmark = pytest.mark.django_db(transaction=True)


def _insert(cursor, slug: str) -> None:
    cursor.execute(
        "INSERT INTO accounts_workspace (id, name, slug, requires_review, created_at) "
        "VALUES (%s, %s, %s, false, CURRENT_TIMESTAMP)",
        [f"ws_{slug}", slug, slug],
    )


def _pipelined() -> bool:
    if connection.vendor != "postgresql":
        return False
    from psycopg import pq

    return connection.connection.pgconn.pipeline_status != pq.PipelineStatus.OFF


def test_writes_in_a_pipeline_are_stored_and_read_back_in_order():
    with transaction.atomic(), statement_pipeline(), connection.cursor() as cursor:
        assert _pipelined() == (connection.vendor == "postgresql")
        for n in range(5):
            _insert(cursor, f"p{n}")
        # A read waits for the writes sent before it.
        cursor.execute("SELECT count(*) FROM accounts_workspace WHERE slug LIKE 'p%%'")
        assert cursor.fetchone()[0] == 5
        _insert(cursor, "p5")
    assert Workspace.objects.filter(slug__startswith="p").count() == 6


def test_a_failed_statement_aborts_the_transaction_as_a_django_error():
    Workspace.objects.create(id="ws_taken", name="taken", slug="taken")
    with pytest.raises(IntegrityError), transaction.atomic(), statement_pipeline(), connection.cursor() as cursor:
        _insert(cursor, "before")
        _insert(cursor, "taken")  # a unique slug already stored
        _insert(cursor, "after")
    assert sorted(Workspace.objects.values_list("slug", flat=True)) == ["taken"]


def test_outside_a_transaction_each_statement_is_answered_at_once():
    # Nothing to defer to: without a transaction a statement commits alone.
    with statement_pipeline(), connection.cursor() as cursor:
        _insert(cursor, "alone")
        assert not _pipelined()
    assert Workspace.objects.filter(slug="alone").exists()


def test_counts_are_unknown_inside_so_updates_do_not_belong_there():
    # Why the block is for writes that need no answer: an UPDATE's row count
    # has not arrived when the ORM reads it.
    Workspace.objects.create(id="ws_counted", name="counted", slug="counted")
    with transaction.atomic(), statement_pipeline():
        updated = Workspace.objects.filter(slug="counted").update(name="renamed")
    assert updated == (-1 if connection.vendor == "postgresql" else 1)
    assert Workspace.objects.get(slug="counted").name == "renamed"
