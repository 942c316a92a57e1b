"""PostgreSQL's pipeline mode for a stretch of writes that need no answer."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from django.db import connection


@contextlib.contextmanager
def statement_pipeline() -> Iterator[None]:
    """PostgreSQL: statements run inside are sent without waiting for each
    one's answer (psycopg's pipeline mode); reading a result waits for what
    was sent before it. For a stretch of writes that need no answer: one
    round trip where each write took one. Elsewhere, or outside a
    transaction (each statement would then commit unseen), nothing changes.

    What needs an answer at once does not belong inside: a cursor's
    `rowcount` is -1 until the answer arrives, so `QuerySet.update()`,
    `Model.save()` of a stored row (it would try an INSERT) and a savepoint
    that catches an error do not work here. A failed statement is raised at
    the next read or as the block ends, and aborts the transaction as it
    would have."""
    if connection.vendor != "postgresql" or not connection.in_atomic_block:
        yield
        return
    with connection.wrap_database_errors, connection.connection.pipeline():
        yield
