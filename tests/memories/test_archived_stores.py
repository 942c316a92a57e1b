"""An archived store is read-only on every route, not only the stores API:
restore, batch status and redact-and-replace refuse its documents too (delete
and redaction, which remove content, still work)."""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from memories.models import MemoryItem, MemoryVersion
from memories.services.items import memory_redact_and_replace
from memories.services.store_memories import store_memory_write
from memories.services.stores import memory_store_archive, memory_store_create
from memories.services.versioning import memory_version_redact
from memory_project.errors import ValidationError
from tests.memories.helpers_items import error_type

pytestmark = pytest.mark.django_db
WRITER = Actor.for_api_key("apikey_test")


@pytest.fixture
def archived(workspace):
    store = memory_store_create(workspace=workspace, name="old notes")
    doc, _ = store_memory_write(workspace=workspace, store_id=store.pk, path="/a.md", content="v1", actor=WRITER)
    store_memory_write(workspace=workspace, store_id=store.pk, path="/a.md", content="v2", actor=WRITER)
    memory_store_archive(workspace=workspace, store_id=store.pk)
    return MemoryItem.objects.get(pk=doc.pk)


def _unchanged(doc) -> bool:
    row = MemoryItem.objects.get(pk=doc.pk)
    return (row.content, row.version, row.status, row.lifecycle_status) == (doc.content, doc.version, doc.status,
                                                                           doc.lifecycle_status)


def test_restore_and_batch_status_refuse_archived_documents(api, archived):
    first = MemoryVersion.objects.get(memory_id=archived.pk, version=1)
    response = api.post(f"/v1/memories/{archived.pk}/restore", {"version_id": first.pk}, format="json")
    assert response.status_code == 400 and "archived" in response.json()["error"]["message"]
    for status in ("deprecated", "active", "pending"):
        response = api.patch("/v1/memories/batch/status", {"ids": [archived.pk], "status": status}, format="json")
        assert response.status_code == 400 and error_type(response) == "invalid_request_error", status
    assert _unchanged(archived)


def test_redact_and_replace_refuses_but_delete_and_redaction_still_work(api, archived, workspace):
    with pytest.raises(ValidationError):
        memory_redact_and_replace(workspace=workspace, actor=Actor.for_user(1), memory_id=archived.pk, content="x")
    assert _unchanged(archived)
    first = MemoryVersion.objects.get(memory_id=archived.pk, version=1)
    memory_version_redact(workspace=workspace, version_id=first.pk, actor=Actor.for_user(1))
    assert api.delete(f"/v1/memories/{archived.pk}").status_code == 200
    assert not MemoryItem.objects.filter(pk=archived.pk).exists()
