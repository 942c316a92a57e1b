"""Restoring a store document onto a path another document took meanwhile is
a 409 found by a check, never by a failing INSERT or UPDATE: PostgreSQL logs a
failed statement, and the statement holds the memory's content."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from django.db import connection

from accounts.actors import Actor
from memories.models import MemoryItem, MemoryVersion
from memories.services.items import memory_item_delete, memory_item_restore
from memories.services.store_memories import store_memory_update, store_memory_write
from memories.services.stores import memory_store_create
from memory_project.errors import ConflictError

pytestmark = pytest.mark.django_db
WRITER = Actor.for_api_key("apikey_test")
SECRET = "the vault code is 7731"


@contextmanager
def failed_statements():
    """Every SQL statement the database refused while the block ran."""
    failures: list[str] = []

    def watch(execute, sql, params, many, context):
        try:
            return execute(sql, params, many, context)
        except Exception:
            failures.append(sql)
            raise

    with connection.execute_wrapper(watch):
        yield failures


@pytest.fixture
def store(workspace):
    return memory_store_create(workspace=workspace, name="notes")


def _write(workspace, store, path, content):
    return store_memory_write(workspace=workspace, store_id=store.pk, path=path, content=content, actor=WRITER)[0]


def test_restoring_a_live_document_onto_a_taken_path(workspace, store, api):
    doc = _write(workspace, store, "/a.md", SECRET)
    store_memory_update(workspace=workspace, store_id=store.pk, memory_id=doc.pk, path="/b.md", actor=WRITER)
    _write(workspace, store, "/a.md", "someone else")
    first = MemoryVersion.objects.get(memory_id=doc.pk, version=1)
    with failed_statements() as failures:
        response = api.post(f"/v1/memories/{doc.pk}/restore", {"version_id": first.pk}, format="json")
    assert response.status_code == 409 and "taken" in response.json()["error"]["message"]
    assert failures == []
    assert MemoryItem.objects.get(pk=doc.pk).path == "/b.md"


def test_restoring_a_deleted_document_onto_a_taken_path(workspace, store):
    doc = _write(workspace, store, "/a.md", SECRET)
    memory_item_delete(workspace=workspace, actor=WRITER, memory_id=doc.pk)
    _write(workspace, store, "/a.md", "someone else")
    first = MemoryVersion.objects.get(memory_id=doc.pk, version=1)
    with failed_statements() as failures, pytest.raises(ConflictError):
        memory_item_restore(workspace=workspace, actor=WRITER, memory_id=doc.pk, version_id=first.pk)
    assert failures == []
    assert not MemoryItem.objects.filter(pk=doc.pk).exists()
    # Once the path is free again, the restore works.
    memory_item_delete(workspace=workspace, actor=WRITER, memory_id=MemoryItem.objects.get(path="/a.md").pk)
    restored = memory_item_restore(workspace=workspace, actor=WRITER, memory_id=doc.pk, version_id=first.pk)
    assert (restored.path, restored.content) == ("/a.md", SECRET)


def test_writing_a_taken_path_create_only_fails_without_a_failed_insert(workspace, store, api):
    _write(workspace, store, "/a.md", "first")
    body = {"path": "/a.md", "content": SECRET, "precondition": {"type": "not_exists"}}
    with failed_statements() as failures:
        response = api.post(f"/v1/memory_stores/{store.pk}/memories", body, format="json")
    assert response.status_code == 409 and failures == []
