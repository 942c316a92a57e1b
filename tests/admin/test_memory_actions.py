"""Batch actions on memories: one summary message with succeeded / skipped /
failed counts, confirmation pages for destructive ones, and redaction behind
its own permission."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from accounts.actors import Actor
from accounts.services import workspace_membership_add
from memories.models import MemoryItem, MemoryVersion
from memories.services.versioning import memory_version_redact
from tests.admin.helpers import messages_of, only_message, run_action

URL = "/admin/memories/memoryitem/"
pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewer(django_user_model, workspace):
    """Staff of `workspace` who may view and change memories (deprecate) but not
    redact or delete."""
    user = django_user_model.objects.create_user("reviewer", password="pw-reviewer-1", is_staff=True)
    codenames = ["view_memoryitem", "change_memoryitem", "view_memoryversion", "view_reviewitem", "change_reviewitem"]
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="memories", codename__in=codenames))
    workspace_membership_add(user=user, workspace=workspace)
    client = Client()
    client.force_login(user)
    return client


def test_batch_deprecate_counts(admin_client, make_memory, edit_memory, admin_user):
    fresh = [make_memory(f"Fact {i}.") for i in range(3)]
    already = make_memory("Already deprecated.", status="deprecated")
    response = run_action(admin_client, URL, "deprecate_selected", [m.pk for m in [*fresh, already]])
    assert only_message(response) == ("success", "Deprecate: 3 succeeded, 1 skipped, 0 failed.")
    assert set(MemoryItem.objects.values_list("status", flat=True)) == {"deprecated"}
    for memory in fresh:
        head = MemoryVersion.objects.get(memory_id=memory.pk, version=2)
        assert (head.actor_type, head.actor_user_id, head.attributes["status"]) == ("user", admin_user.pk, "deprecated")
    assert MemoryVersion.objects.filter(memory_id=already.pk).count() == 1


def test_batch_reactivate_across_workspaces(admin_client, make_memory, other_workspace):
    mine = make_memory("Mine.", status="deprecated")
    theirs = make_memory("Theirs.", ws=other_workspace, status="deprecated")
    active = make_memory("Active already.")
    response = run_action(admin_client, URL, "reactivate_selected", [mine.pk, theirs.pk, active.pk])
    assert only_message(response) == ("success", "Reactivate: 2 succeeded, 1 skipped, 0 failed.")
    assert set(MemoryItem.objects.values_list("lifecycle_status", flat=True)) == {"active"}


def test_only_skipped_is_a_warning(admin_client, make_memory):
    item = make_memory("Active.")
    response = run_action(admin_client, URL, "reactivate_selected", [item.pk])
    assert only_message(response) == ("warning", "Reactivate: 0 succeeded, 1 skipped, 0 failed.")


def test_failed_rows_are_counted_and_explained(admin_client, make_memory, monkeypatch):
    from memories.admin import batch
    from memory_project.errors import ConflictError

    items = [make_memory(f"Fact {i}.") for i in range(2)]

    def refuse(**kwargs):
        raise ConflictError("Refused for this test.")

    monkeypatch.setattr(batch, "memory_items_set_status", refuse)
    response = run_action(admin_client, URL, "deprecate_selected", [m.pk for m in items])
    assert only_message(response) == ("error", "Deprecate: 0 succeeded, 0 skipped, 2 failed. Refused for this test.")
    assert set(MemoryItem.objects.values_list("status", flat=True)) == {"active"}


def test_delete_asks_first_then_deletes_through_the_service(admin_client, make_memory):
    items = [make_memory(f"Fact {i}.") for i in range(2)]
    keep = make_memory("Keep me.")
    response = run_action(admin_client, URL, "delete_memories", [m.pk for m in items])
    assert response.status_code == 200
    assert "Delete these 2 memories?" in response.content.decode()
    assert MemoryItem.objects.count() == 3
    response = run_action(admin_client, URL, "delete_memories", [m.pk for m in items], confirm=True)
    assert only_message(response) == ("success", "Delete: 2 succeeded, 0 skipped, 0 failed.")
    assert list(MemoryItem.objects.values_list("pk", flat=True)) == [keep.pk]
    assert MemoryVersion.objects.filter(operation="deleted").count() == 2


def test_stock_bulk_delete_is_not_offered(admin_client, make_memory):
    make_memory("A fact.")
    response = admin_client.get(URL)
    assert "delete_selected" not in response.content.decode()


def test_redact_history_lists_exactly_what_it_clears(admin_client, make_memory, edit_memory):
    item = make_memory("Card 4111-1111-1111-1111.")
    edit_memory(item, content="Card ending 1111.")
    edit_memory(item, content="Payment details removed.")
    untouched = make_memory("Only one version.")
    response = run_action(admin_client, URL, "redact_history", [item.pk, untouched.pk])
    html = response.content.decode()
    v1, v2, v3 = MemoryVersion.objects.filter(memory_id=item.pk).order_by("version")
    assert v1.pk in html and v2.pk in html
    assert v3.pk not in html  # the live head stays
    assert "these 2 earlier versions" in html
    assert MemoryVersion.objects.filter(redacted_at__isnull=False).count() == 0
    response = run_action(admin_client, URL, "redact_history", [item.pk, untouched.pk], confirm=True)
    assert only_message(response) == ("success", "Redact: 1 succeeded, 1 skipped, 0 failed.")
    v1.refresh_from_db(), v2.refresh_from_db(), v3.refresh_from_db()
    assert v1.content is None and v2.content is None and v1.redacted_by_type == "user"
    assert v3.content == "Payment details removed."
    page = admin_client.get(reverse("admin:memories_memoryitem_change", args=[item.pk])).content.decode()
    assert "4111" not in page and "ending 1111" not in page
    assert page.count('class="redacted-note"') == 2


def test_reviewer_cannot_redact(reviewer, make_memory, edit_memory):
    item = make_memory("Secret one.")
    edit_memory(item, content="Secret two.")
    old = MemoryVersion.objects.get(memory_id=item.pk, version=1)
    page = reviewer.get(URL).content.decode()
    assert "deprecate_selected" in page and "redact_history" not in page and "delete_memories" not in page
    response = run_action(reviewer, URL, "redact_history", [item.pk], confirm=True)
    assert response.status_code == 403
    assert MemoryVersion.objects.get(pk=old.pk).redacted_at is None
    assert reviewer.get(reverse("admin:memories_memoryitem_redact_version", args=[item.pk, old.pk])).status_code == 403
    assert reviewer.post(reverse("admin:memories_memoryitem_redact_and_replace", args=[item.pk])).status_code == 403
    response = run_action(reviewer, URL, "deprecate_selected", [item.pk])
    assert only_message(response) == ("success", "Deprecate: 1 succeeded, 0 skipped, 0 failed.")
    change_page = reviewer.get(reverse("admin:memories_memoryitem_change", args=[item.pk])).content.decode()
    assert "Redact…" not in change_page and "Redact and replace" not in change_page


def test_redact_permission_alone_is_enough(reviewer, make_memory, edit_memory, django_user_model):
    user = django_user_model.objects.get(username="reviewer")
    user.user_permissions.add(Permission.objects.get(codename="redact_memoryversion"))
    item = make_memory("Secret one.")
    edit_memory(item, content="Secret two.")
    old = MemoryVersion.objects.get(memory_id=item.pk, version=1)
    url = reverse("admin:memories_memoryitem_redact_version", args=[item.pk, old.pk])
    assert "Secret one." in reviewer.get(url).content.decode()
    response = reviewer.post(url, {"post": "yes"}, follow=True)
    assert ("success", "Redacted version 1.") in messages_of(response)
    old.refresh_from_db()
    assert old.redacted_at is not None and old.content is None and old.path is None


def test_redacting_the_head_is_refused(admin_client, make_memory):
    item = make_memory("Only version.")
    head = MemoryVersion.objects.get(pk=item.current_version_id)
    url = reverse("admin:memories_memoryitem_redact_version", args=[item.pk, head.pk])
    page = admin_client.get(url).content.decode()
    assert "cannot be redacted on its own" in page and "Yes, redact" not in page
    response = admin_client.post(url, {"post": "yes"}, follow=True)
    assert any(level == "error" for level, _text in messages_of(response))
    head.refresh_from_db()
    assert head.content == "Only version."


def test_redact_and_replace_two_steps(admin_client, make_memory, edit_memory):
    item = make_memory("Phone +351 912 345 678.")
    edit_memory(item, content="Phone +351 912 345 679.")
    url = reverse("admin:memories_memoryitem_redact_and_replace", args=[item.pk])
    page = admin_client.get(url).content.decode()
    assert "Versions that will be cleared (2)" in page
    response = admin_client.post(url, {"content": "The user shared a phone number.", "expected_version": 2})
    page = response.content.decode()
    assert "Yes, replace and redact" in page and "The user shared a phone number." in page
    item.refresh_from_db()
    assert item.version == 2  # nothing written yet
    response = admin_client.post(
        url, {"content": "The user shared a phone number.", "expected_version": 2, "confirmed": "True"}, follow=True
    )
    assert ("success", "Replaced the content and redacted 2 earlier version(s).") in messages_of(response)
    item.refresh_from_db()
    assert item.content == "The user shared a phone number." and item.version == 3
    remaining = list(MemoryVersion.objects.filter(memory_id=item.pk).values_list("content", flat=True).order_by("version"))
    assert remaining == [None, None, "The user shared a phone number."]
    assert "912 345" not in response.content.decode()


def test_redact_and_replace_with_a_stale_version(admin_client, make_memory, edit_memory):
    item = make_memory("Old secret.")
    url = reverse("admin:memories_memoryitem_redact_and_replace", args=[item.pk])
    edit_memory(item, content="Newer secret.")
    response = admin_client.post(url, {"content": "Clean text.", "expected_version": 1, "confirmed": "True"})
    assert response.status_code == 200
    assert "version 2, not 1" in response.content.decode()
    item.refresh_from_db()
    assert item.content == "Newer secret."
    assert MemoryVersion.objects.filter(memory_id=item.pk, redacted_at__isnull=False).count() == 0


def test_redaction_scrubs_the_admin_log(admin_user, make_memory, edit_memory):
    """Even a log entry written by something else that quoted the text goes."""
    from django.contrib.admin.models import CHANGE, LogEntry
    from django.contrib.contenttypes.models import ContentType

    item = make_memory("My passport number is X1234567 issued in Lisbon.")
    edit_memory(item, content="Passport details removed.")
    LogEntry.objects.create(
        user_id=admin_user.pk,
        content_type=ContentType.objects.get_for_model(MemoryItem),
        object_id=item.pk,
        object_repr="My passport number is X1234567 issued in Lisbon.",
        action_flag=CHANGE,
        change_message="",
    )
    old = MemoryVersion.objects.get(memory_id=item.pk, version=1)
    memory_version_redact(workspace=item.workspace, version_id=old.pk, actor=Actor.system())
    assert not LogEntry.objects.filter(object_repr__contains="X1234567").exists()
