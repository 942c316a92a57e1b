"""A memory's page: edits through the services (a version per save, the
operator as actor, stale versions refused), history with diffs, edges, the
source floor, restore, and admin log entries that never hold the text."""

from __future__ import annotations

import json

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from accounts.actors import Actor
from memories.models import MemoryItem, MemoryVersion
from memories.services.edges import memory_edge_create
from memories.services.store_memories import store_memory_write
from memories.services.stores import memory_store_create
from tests.admin.helpers import messages_of

pytestmark = pytest.mark.django_db


def change_url(item) -> str:
    return reverse("admin:memories_memoryitem_change", args=[item.pk])


def form_data(item, **overrides) -> dict:
    data = {
        "content": item.content,
        "expected_version": item.version,
        "summary_tier": item.summary_tier or "",
        "fact_key": item.fact_key or "",
        "metadata": json.dumps(item.metadata),
        "due_date": item.due_date.isoformat() if item.due_date else "",
        "importance": item.importance,
        "confidence": item.confidence,
        "status": item.status,
        "lifecycle_status": item.lifecycle_status,
    }
    data.update(overrides)
    return data


def test_page_shows_history_diff_edges_and_source(admin_client, make_memory, edit_memory, conversation_with_floors):
    conversation, branch, messages = conversation_with_floors
    item = make_memory("I live in Porto.", fact_key="city", source_message_id=messages[2].pk)
    edit_memory(item, content="I live in Lisbon.")
    other = make_memory("Moved in 2024.")
    memory_edge_create(workspace=item.workspace, from_id=other.pk, to_id=item.pk, relation="supports")
    target = make_memory("Old city fact.")
    memory_edge_create(workspace=item.workspace, from_id=item.pk, to_id=target.pk, relation="updates")
    response = admin_client.get(change_url(item))
    assert response.status_code == 200
    html = response.content.decode()
    # A word-level diff: only the changed word is marked.
    assert '<span class="w-eq">I live in </span><del class="w-del">Porto</del><ins class="w-add">Lisbon</ins>' in html
    assert "Version history (2)" in html
    assert "supports" in html and other.pk in html
    assert "updates" in html and target.pk in html
    floor_url = reverse("admin:conversations_conversation_change", args=[conversation.pk])
    assert f"{floor_url}?branch={branch.pk}&amp;around=3#floor-{branch.pk}-3" in html
    assert 'name="expected_version" value="2"' in html


def test_source_redirects_to_the_floor(admin_client, make_memory, conversation_with_floors):
    conversation, branch, messages = conversation_with_floors
    item = make_memory("Likes coffee.", source_message_id=messages[0].pk)
    response = admin_client.get(reverse("admin:memories_memoryitem_source", args=[item.pk]))
    assert response.status_code == 302
    assert response["Location"].endswith(f"#floor-{branch.pk}-1")
    gone = make_memory("From a deleted message.", source_message_id="msg_gone")
    response = admin_client.get(reverse("admin:memories_memoryitem_source", args=[gone.pk]), follow=True)
    assert ("warning", "The source message of this memory no longer exists.") in messages_of(response)


def test_edit_writes_a_version_with_the_operator(admin_client, admin_user, make_memory):
    item = make_memory("The user likes tea.", fact_key="drink")
    response = admin_client.post(change_url(item), form_data(item, content="The user likes green tea.\r\n", importance="0.8"))
    assert response.status_code == 302
    item.refresh_from_db()
    assert item.content == "The user likes green tea.\n"
    assert item.importance == 0.8
    assert item.version == 2
    head = MemoryVersion.objects.get(pk=item.current_version_id)
    assert (head.version, head.operation, head.actor_type, head.actor_user_id) == (2, "modified", "user", admin_user.pk)


def test_edit_metadata_as_json(admin_client, make_memory):
    item = make_memory("The user likes tea.", fact_key="drink")
    response = admin_client.post(change_url(item), form_data(item, metadata='{"source": "crm", "rank": 2}'))
    assert response.status_code == 302
    item.refresh_from_db()
    assert item.metadata == {"source": "crm", "rank": 2} and item.version == 2
    # Not an object: the form again, with the rule's words, nothing written.
    response = admin_client.post(change_url(item), form_data(item, metadata="[1, 2]"))
    assert response.status_code == 200 and "must be an object" in response.content.decode()
    item.refresh_from_db()
    assert item.metadata == {"source": "crm", "rank": 2} and item.version == 2


def test_unchanged_save_writes_no_version(admin_client, make_memory):
    item = make_memory("Line one\nline two")
    # Browsers send textarea line breaks as CRLF: that is not a change.
    response = admin_client.post(change_url(item), form_data(item, content="Line one\r\nline two"))
    assert response.status_code == 302
    assert MemoryVersion.objects.filter(memory_id=item.pk).count() == 1


def test_stale_version_is_refused_and_input_kept(admin_client, make_memory, edit_memory):
    item = make_memory("Original text.")
    stale = form_data(item, content="My edit from an old page.")
    edit_memory(item, content="Someone else's newer text.")
    response = admin_client.post(change_url(item), stale)
    assert response.status_code == 200  # the form again, with the error
    html = response.content.decode()
    assert "changed by someone else" in html
    assert "My edit from an old page." in html
    item.refresh_from_db()
    assert item.content == "Someone else's newer text."
    assert item.version == 2


def test_conflict_decided_under_the_lock_is_reported(admin_client, make_memory, monkeypatch):
    """The race the form's early check cannot see: the service refuses under
    the row lock, the operator gets a message, nothing is written."""
    from memories.admin import forms as admin_forms

    item = make_memory("Original text.")
    monkeypatch.setattr(admin_forms.MemoryItemForm, "clean", lambda self: self.cleaned_data)
    data = form_data(item, content="Edit on a stale page.", expected_version=7)
    response = admin_client.post(change_url(item), data, follow=True)
    assert any(level == "error" and "Not saved" in text and "version" in text for level, text in messages_of(response))
    item.refresh_from_db()
    assert item.content == "Original text." and item.version == 1


def test_illegal_status_combination_is_a_form_error(admin_client, make_memory):
    item = make_memory("A fact.")
    response = admin_client.post(change_url(item), form_data(item, status="deprecated", lifecycle_status="pending"))
    assert response.status_code == 200
    assert "cannot go with" in response.content.decode()
    item.refresh_from_db()
    assert item.status == "active"


def test_blank_content_is_refused(admin_client, make_memory):
    item = make_memory("A fact.")
    response = admin_client.post(change_url(item), form_data(item, content="   "))
    assert response.status_code == 200
    assert "must not be blank" in response.content.decode()


def test_store_document_edit_goes_through_the_store(admin_client, workspace):
    store = memory_store_create(workspace=workspace, name="Notes")
    doc, _ = store_memory_write(workspace=workspace, store_id=store.pk, path="/a.md", content="v1", actor=Actor.system())
    response = admin_client.get(change_url(doc))
    assert 'name="fact_key"' not in response.content.decode()
    response = admin_client.post(change_url(doc), {"content": "v2", "expected_version": doc.version})
    assert response.status_code == 302
    doc.refresh_from_db()
    assert doc.content == "v2" and doc.path == "/a.md" and doc.version == 2


def test_restore_a_version(admin_client, make_memory, edit_memory, admin_user):
    item = make_memory("First text.")
    first = MemoryVersion.objects.get(memory_id=item.pk, version=1)
    edit_memory(item, content="Second text.")
    url = reverse("admin:memories_memoryitem_restore", args=[item.pk, first.pk])
    assert admin_client.get(url).status_code == 405
    response = admin_client.post(url, follow=True)
    assert ("success", "Restored version 1 as version 3.") in messages_of(response)
    item.refresh_from_db()
    assert item.content == "First text." and item.version == 3
    assert MemoryVersion.objects.get(pk=item.current_version_id).actor_user_id == admin_user.pk


def test_restore_a_redacted_version_is_refused(admin_client, make_memory, edit_memory):
    from memories.services.versioning import memory_version_redact

    item = make_memory("Secret.")
    first = MemoryVersion.objects.get(memory_id=item.pk, version=1)
    edit_memory(item, content="Public.")
    memory_version_redact(workspace=item.workspace, version_id=first.pk, actor=Actor.system())
    response = admin_client.post(reverse("admin:memories_memoryitem_restore", args=[item.pk, first.pk]), follow=True)
    assert any(level == "error" and "redacted" in text for level, text in messages_of(response))
    item.refresh_from_db()
    assert item.content == "Public."


def test_delete_from_the_page_writes_a_deleted_version(admin_client, make_memory):
    item = make_memory("To be deleted.")
    url = reverse("admin:memories_memoryitem_delete", args=[item.pk])
    assert admin_client.get(url).status_code == 200
    response = admin_client.post(url, {"post": "yes"})
    assert response.status_code == 302
    assert not MemoryItem.objects.filter(pk=item.pk).exists()
    assert MemoryVersion.objects.filter(memory_id=item.pk, operation="deleted").count() == 1


def test_log_entries_hold_no_content(admin_client, make_memory, workspace):
    store = memory_store_create(workspace=workspace, name="Notes")
    doc, _ = store_memory_write(
        workspace=workspace, store_id=store.pk, path="/secret/ssn-123-45-6789.md", content="v1", actor=Actor.system()
    )
    admin_client.post(change_url(doc), {"content": "SSN 123-45-6789 of the user", "expected_version": doc.version})
    item = make_memory("Top secret text.")
    admin_client.post(change_url(item), form_data(item, content="Even more secret text."))
    admin_client.post(reverse("admin:memories_memoryitem_delete", args=[item.pk]), {"post": "yes"})
    entries = list(LogEntry.objects.all())
    assert len(entries) == 3
    for entry in entries:
        assert "secret" not in entry.object_repr.lower() and "secret" not in entry.change_message.lower()
        assert "123-45" not in entry.object_repr and "123-45" not in entry.change_message
    assert {entry.object_repr for entry in entries} == {f"{doc.pk} (document)", f"{item.pk} (fact)"}


def test_every_source_links_to_its_floor_on_its_branch(admin_client, make_memory, conversation_with_floors):
    conversation, branch, messages = conversation_with_floors
    item = make_memory("Lives in Lisbon, likes tea.")
    MemoryItem.objects.filter(pk=item.pk).update(sources=[messages[0].pk, messages[2].pk])
    html = admin_client.get(change_url(item)).content.decode()
    floor_url = reverse("admin:conversations_conversation_change", args=[conversation.pk])
    for floor in (1, 3):
        assert f"{floor_url}?branch={branch.pk}&amp;around={floor}#floor-{branch.pk}-{floor}" in html
