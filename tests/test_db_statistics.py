"""After a migrate, SQLite's statistics cover the indexes it added
(`memory_project.db.analyze_after_migrate`)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models.signals import post_migrate

from memory_project.db import analyze_after_migrate

pytestmark = [pytest.mark.django_db, pytest.mark.skipif("connection.vendor != 'sqlite'")]


def _analyzed_indexes() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT idx FROM sqlite_stat1 WHERE tbl = 'stats_probe'")
        return {row[0] for row in cursor.fetchall()}


def test_a_migrate_that_applied_something_analyzes_an_analyzed_database():
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE stats_probe (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER)")
        cursor.executemany("INSERT INTO stats_probe (a, b) VALUES (%s, %s)", [(n % 7, n) for n in range(50)])
        cursor.execute("CREATE INDEX stats_probe_a ON stats_probe (a)")
        cursor.execute("ANALYZE")
        cursor.execute("CREATE INDEX stats_probe_b ON stats_probe (b)")  # what a migration adds
    assert _analyzed_indexes() == {"stats_probe_a"}
    analyze_after_migrate(sender=None, plan=[])  # nothing applied: nothing done
    assert _analyzed_indexes() == {"stats_probe_a"}
    analyze_after_migrate(sender=None, plan=[("a migration", False)])
    assert _analyzed_indexes() == {"stats_probe_a", "stats_probe_b"}


def test_the_receiver_runs_after_every_migrate():
    from django.apps import apps

    sync, _ = post_migrate._live_receivers(apps.get_app_config("conversations"))
    assert analyze_after_migrate in sync
