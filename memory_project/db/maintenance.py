"""Database upkeep run by signals."""

from __future__ import annotations

from typing import Any

from django.db import connections


def analyze_after_migrate(sender: Any, using: str = "default", plan: Any = None, **kwargs: Any) -> None:
    """`post_migrate` receiver: on SQLite whose tables have statistics (an
    earlier ANALYZE), a migrate that applied anything analyzes again. SQLite
    takes an index without statistics for a very selective one, so a new
    index beside analyzed ones can win every plan it fits: a search list
    read a whole workspace through a new scope index instead of its
    full-text match (82 vs 16 ms on 100,000 memories). A database never
    analyzed (a new one) is left as it is; PostgreSQL plans an index from
    its table's statistics."""

    target = connections[using]
    if target.vendor != "sqlite" or not plan:
        return
    with target.cursor() as cursor:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'")
        if cursor.fetchone():
            cursor.execute("ANALYZE")
