"""Memory stores as a path tree, versions (redact / restore) and edges."""

from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.actors import Actor
from memories.models import MemoryEdge, MemoryItem, MemoryStore, MemoryVersion
from memories.services.items import memory_item_delete
from memories.services.store_memories import store_memory_write
from memories.services.stores import memory_store_create
from tests.admin.helpers import only_message, run_action

pytestmark = pytest.mark.django_db
VERSIONS = "/admin/memories/memoryversion/"
EDGES = "/admin/memories/memoryedge/"
STORES = "/admin/memories/memorystore/"


@pytest.fixture
def store(workspace):
    store = memory_store_create(workspace=workspace, name="Project notes")
    for path in ["/readme.md", "/notes/a.md", "/notes/b.md", "/notes/deep/c.md", "/todo/x.md"]:
        store_memory_write(workspace=workspace, store_id=store.pk, path=path, content=f"content of {path}", actor=Actor.system())
    return store


def test_store_list_counts(admin_client, store):
    response = admin_client.get(STORES)
    assert response.status_code == 200
    row = response.context["cl"].result_list[0]
    assert row.entry_count == 5


def test_store_tree_root_and_folder(admin_client, store):
    url = reverse("admin:memories_memorystore_change", args=[store.pk])
    response = admin_client.get(url)
    folders = [(f.name, f.documents) for f in response.context["tree_folders"]]
    docs = [d.name for d in response.context["tree_documents"]]
    assert folders == [("notes", 3), ("todo", 1)] and docs == ["readme.md"]
    response = admin_client.get(url, {"prefix": "/notes/"})
    assert [(f.name, f.documents) for f in response.context["tree_folders"]] == [("deep", 1)]
    assert [(d.name, d.versions) for d in response.context["tree_documents"]] == [("a.md", 1), ("b.md", 1)]
    assert "Recent versions" in response.content.decode()


def test_store_edit_and_archive_through_the_service(admin_client, store):
    url = reverse("admin:memories_memorystore_change", args=[store.pk])
    response = admin_client.post(url, {"name": "Renamed", "description": "d", "metadata": '{"team": "core"}'}, follow=True)
    assert response.redirect_chain[0][1] == 302
    store.refresh_from_db()
    assert (store.name, store.metadata) == ("Renamed", {"team": "core"})
    response = run_action(admin_client, STORES, "archive_stores", [store.pk])
    assert only_message(response) == ("success", "Archive: 1 succeeded, 0 skipped, 0 failed.")
    response = run_action(admin_client, STORES, "archive_stores", [store.pk])
    assert only_message(response) == ("warning", "Archive: 0 succeeded, 1 skipped, 0 failed.")
    assert MemoryStore.objects.get(pk=store.pk).archived_at is not None


def test_store_delete_asks_first(admin_client, store):
    response = run_action(admin_client, STORES, "delete_stores", [store.pk])
    assert "5 document(s)" in response.content.decode()
    response = run_action(admin_client, STORES, "delete_stores", [store.pk], confirm=True)
    assert only_message(response) == ("success", "Delete: 1 succeeded, 0 skipped, 0 failed.")
    assert not MemoryItem.objects.filter(store_id=store.pk).exists()


def test_version_list_and_search(admin_client, make_memory, edit_memory):
    item = make_memory("First.")
    edit_memory(item, content="Second.")
    response = admin_client.get(VERSIONS, {"q": item.pk})
    assert sorted(v.version for v in response.context["cl"].result_list) == [1, 2]
    response = admin_client.get(VERSIONS, {"operation__exact": "modified"})
    assert [v.version for v in response.context["cl"].result_list] == [2]
    item.refresh_from_db()
    page = admin_client.get(reverse("admin:memories_memoryversion_change", args=[item.current_version_id]))
    assert "Second." in page.content.decode()


def test_version_redact_action_skips_heads(admin_client, make_memory, edit_memory):
    item = make_memory("Old secret.")
    edit_memory(item, content="Clean.")
    versions = list(MemoryVersion.objects.filter(memory_id=item.pk).order_by("version"))
    response = run_action(admin_client, VERSIONS, "redact_selected", [v.pk for v in versions])
    html = response.content.decode()
    assert "Old secret." in html and "1 selected version(s) are the current content" in html
    response = run_action(admin_client, VERSIONS, "redact_selected", [v.pk for v in versions], confirm=True)
    assert only_message(response) == ("success", "Redact: 1 succeeded, 1 skipped, 0 failed.")
    contents = list(MemoryVersion.objects.filter(memory_id=item.pk).order_by("version").values_list("content", flat=True))
    assert contents == [None, "Clean."]
    page = admin_client.get(reverse("admin:memories_memoryversion_change", args=[versions[0].pk])).content.decode()
    assert "Old secret." not in page and "redacted" in page


def test_restore_a_deleted_memory_from_its_version(admin_client, make_memory, workspace):
    item = make_memory("Worth keeping.")
    first = item.current_version_id
    memory_item_delete(workspace=workspace, actor=Actor.system(), memory_id=item.pk)
    response = run_action(admin_client, VERSIONS, "restore_selected", [first])
    assert only_message(response) == ("success", "Restore: 1 succeeded, 0 skipped, 0 failed.")
    assert MemoryItem.objects.get(pk=item.pk).content == "Worth keeping."


def test_versions_cannot_be_deleted_or_added(admin_client, make_memory):
    make_memory("A.")
    assert admin_client.get(reverse("admin:memories_memoryversion_add")).status_code == 403
    assert "delete_selected" not in admin_client.get(VERSIONS).content.decode()


def test_edges_add_and_delete_through_the_service(admin_client, make_memory):
    a, b = make_memory("A."), make_memory("B.")
    response = admin_client.post(
        reverse("admin:memories_memoryedge_add"), {"from_item": a.pk, "to_item": b.pk, "relation": "supports"}
    )
    assert response.status_code == 302
    edge = MemoryEdge.objects.get()
    assert (edge.from_item_id, edge.to_item_id, edge.relation, edge.workspace_id) == (a.pk, b.pk, "supports", a.workspace_id)
    response = admin_client.get(EDGES, {"q": b.pk})
    assert [e.pk for e in response.context["cl"].result_list] == [edge.pk]
    response = run_action(admin_client, EDGES, "delete_edges", [edge.pk])
    assert "Delete these 1 edge(s)?" in response.content.decode()
    response = run_action(admin_client, EDGES, "delete_edges", [edge.pk], confirm=True)
    assert only_message(response) == ("success", "Delete: 1 succeeded, 0 skipped, 0 failed.")
    assert not MemoryEdge.objects.exists()


def test_edge_to_another_workspace_is_refused(admin_client, make_memory, other_workspace):
    a, b = make_memory("A."), make_memory("B.", ws=other_workspace)
    response = admin_client.post(
        reverse("admin:memories_memoryedge_add"), {"from_item": a.pk, "to_item": b.pk, "relation": "supports"}, follow=True
    )
    assert not MemoryEdge.objects.exists()
    assert any("Not saved" in str(m) for m in response.context["messages"])
