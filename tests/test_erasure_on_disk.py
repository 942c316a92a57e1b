"""The rewrite after an erasure waits for the transactions that could keep
the erased rows alive, on PostgreSQL: a snapshot of this database taken
before the erasure, and a transaction of another database of the same
server (it lowers the snapshot VACUUM FULL takes, which then keeps the
deleted rows as recently dead)."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from django.db import connection

from tests.test_planted_secrets import scan

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

SECRET = "qzv77ondisksecret40417x"
HELD_SECONDS = 1.0


def _held_transaction(dbname: str, statement: str, isolation: str = "READ COMMITTED") -> threading.Event:
    """Open a transaction in `dbname` that runs `statement`, keep it open
    for HELD_SECONDS after the returned event is set, then end it."""
    settings = connection.settings_dict
    conn = psycopg.connect(host=settings["HOST"] or None, port=settings["PORT"] or None,
                           user=settings["USER"], password=settings["PASSWORD"] or None, dbname=dbname)
    conn.execute(f"BEGIN ISOLATION LEVEL {isolation}")
    conn.execute(statement)
    erasing = threading.Event()

    def hold() -> None:
        erasing.wait(30)
        time.sleep(HELD_SECONDS)
        conn.rollback()
        conn.close()

    threading.Thread(target=hold, daemon=True).start()
    return erasing


def _append(api) -> None:
    entry = {"type": "user", "uuid": "u1", "message": {"role": "user", "content": SECRET}}
    key = {"project_key": "p", "session_id": "s-disk"}
    assert api.post("/v1/claude_sessions/append", {**key, "entries": [entry]}, format="json").status_code in (200, 201)


def _delete(api) -> None:
    response = api.post("/v1/claude_sessions/delete", {"project_key": "p", "session_id": "s-disk"}, format="json")
    assert response.status_code in (200, 204), response.content


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("the rewrite of table files is PostgreSQL's")


def test_a_running_transaction_of_another_database_is_waited_for(api, workspace):
    _append(api)
    # A transaction id assigned elsewhere on the server, older than the erasure.
    erasing = _held_transaction("postgres", "SELECT pg_current_xact_id()")
    erasing.set()
    _delete(api)
    assert scan(workspace, [SECRET]) == {}


def test_a_snapshot_of_this_database_taken_before_the_erasure_is_waited_for(api, workspace):
    _append(api)
    erasing = _held_transaction(connection.settings_dict["NAME"], "SELECT count(*) FROM conversations_sessionentry",
                                isolation="REPEATABLE READ")
    erasing.set()
    _delete(api)
    assert scan(workspace, [SECRET]) == {}
