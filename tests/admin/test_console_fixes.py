"""The console's small defects of issue 44, each as an operator meets it:
dates in one format, floor numbers instead of message ids, edges with the
text they point at, review context that belongs to the item, redaction
that never ends in "nothing to do", previews that count what results count."""

from __future__ import annotations

import re

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from accounts.services import workspace_membership_add
from memories.models import MemoryEdge, MemoryItem, MemoryVersion
from tests.admin.helpers import only_message, run_action
from tests.factories import MemoryItemFactory, written_floors
from tests.memories.pipeline_helpers import eager_celery

pytestmark = pytest.mark.django_db


def test_conversation_page_dates_and_summary_floor(admin_client, conversation_with_floors):
    conversation, branch, messages = conversation_with_floors
    # The summarizer records the last message it read, by id.
    conversation.metadata = {"summary": "User likes coffee.", "summarized_until": messages[2].pk}
    conversation.save(update_fields=["metadata"])
    html = admin_client.get(reverse("admin:conversations_conversation_change", args=[conversation.pk])).content.decode()
    assert "until floor msg_" not in html
    until = re.search(r'class="quiet summary-until">\(until <a href="([^"]+)">floor (\d+)</a>\)', html)
    assert until and until.group(2) == "3"
    assert until.group(1).endswith(f"#floor-{branch.pk}-3")
    # The console's one date format, never Django's "Nov. 29, 2026, 10:14 a.m.".
    created = f"{conversation.created_at:%Y-%m-%d %H:%M:%S}"
    assert created in html
    assert not re.search(r"\b(a\.m\.|p\.m\.)", html)


def test_conversation_list_dates_in_console_format(admin_client, conversation_with_floors):
    conversation, _branch, _messages = conversation_with_floors
    conversation.last_message_at = conversation.created_at
    conversation.save(update_fields=["last_message_at"])
    html = admin_client.get(reverse("admin:conversations_conversation_changelist")).content.decode()
    assert f"{conversation.last_message_at:%Y-%m-%d %H:%M:%S}" in html
    assert not re.search(r"\b(a\.m\.|p\.m\.)", html)


def _staff_client(django_user_model, workspace, name: str, codenames: list[str]) -> Client:
    user = django_user_model.objects.create_user(name, password="x", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    workspace_membership_add(user=user, workspace=workspace)
    client = Client()
    client.force_login(django_user_model.objects.get(pk=user.pk))
    return client


def test_memory_page_edges_show_the_other_memorys_text_and_link(admin_client, make_memory):
    old = make_memory("User prefers aisle seats on long flights.", fact_key="user.seat")
    new = make_memory("User prefers window seats.", fact_key="user.seat.v2")
    summary = make_memory("Facts: " + "the user travels a lot; " * 20, type="summary", summary_tier="micro")
    MemoryEdge.objects.create(workspace=old.workspace, from_item=new, to_item=old, relation="updates")
    MemoryEdge.objects.create(workspace=old.workspace, from_item=summary, to_item=old, relation="compacts")
    html = admin_client.get(reverse("admin:memories_memoryitem_change", args=[old.pk])).content.decode()
    panel = html[html.index('id="memory-edges"'):html.index('id="memory-history"')]
    rows = re.findall(r'<tr class="edge-in">(.*?)</tr>', panel, re.S)
    assert len(rows) == 2
    updates = next(row for row in rows if "updates" in row)
    assert "is replaced by" in updates and "User prefers window seats." in updates
    assert f'href="{reverse("admin:memories_memoryitem_change", args=[quote(new.pk)])}"' in updates
    compacts = next(row for row in rows if "compacts" in row)
    assert "is compacted into" in compacts and "Facts: the user travels a lot;" in compacts
    # A long text is cut, never shown whole.
    assert summary.content not in compacts and "…" in compacts
    # From the other side: the outgoing edge names the old memory by its text.
    html = admin_client.get(reverse("admin:memories_memoryitem_change", args=[new.pk])).content.decode()
    out = re.search(r'<tr class="edge-out">(.*?)</tr>', html, re.S).group(1)
    assert "replaces" in out and "User prefers aisle seats on long flights." in out


def test_edges_hide_unapproved_text_from_operators_who_do_not_review(review_workspace, django_user_model):
    approved = MemoryItemFactory(workspace=review_workspace, content="User prefers aisle seats.")
    pending = MemoryItemFactory(workspace=review_workspace, content="Pending: locker code 4711.", status="pending")
    assert pending.lifecycle_status == "pending"
    MemoryEdge.objects.create(workspace=review_workspace, from_item=pending, to_item=approved, relation="updates")
    url = reverse("admin:memories_memoryitem_change", args=[approved.pk])
    viewer = ["view_memoryitem"]
    html = _staff_client(django_user_model, review_workspace, "viewer", viewer).get(url).content.decode()
    assert "locker code 4711" not in html
    assert "shown to reviewers only" in html and pending.pk in html
    reviewer = [*viewer, "view_reviewitem", "change_reviewitem"]
    html = _staff_client(django_user_model, review_workspace, "reviewer", reviewer).get(url).content.decode()
    assert "Pending: locker code 4711." in html


def test_lists_pages_and_versions_leave_out_unapproved_memories_for_operators_who_do_not_review(
        review_workspace, django_user_model):
    """Whoever does not review sees no memory that awaits review (or was
    rejected from it) in a workspace that requires review: not in the list,
    not by a search, not on its page or its redaction page, not among the
    versions. A reviewer sees all of them."""
    approved = MemoryItemFactory(workspace=review_workspace, content="User prefers aisle seats.")
    pending = MemoryItemFactory(workspace=review_workspace, content="Pending: locker code 4711.", status="pending")
    rejected = MemoryItemFactory(workspace=review_workspace, content="Rejected: safe code 2288.", status="pending")
    rejected.lifecycle_status = "deprecated"
    rejected.status = "deprecated"
    rejected.save(update_fields=["lifecycle_status", "status"])
    viewer = ["view_memoryitem", "view_memoryversion", "redact_memoryversion"]
    client = _staff_client(django_user_model, review_workspace, "viewer", viewer)
    memories = reverse("admin:memories_memoryitem_changelist")
    for html in (client.get(memories).content.decode(), client.get(memories, {"q": "code"}).content.decode()):
        assert "4711" not in html and "2288" not in html and pending.pk not in html and rejected.pk not in html
    assert approved.pk in client.get(memories).content.decode()
    for item in (pending, rejected):
        for url in (reverse("admin:memories_memoryitem_change", args=[item.pk]),
                    reverse("admin:memories_memoryitem_redact_and_replace", args=[item.pk])):
            response = client.get(url, follow=True)
            assert "4711" not in response.content.decode() and "2288" not in response.content.decode()
    versions = client.get(reverse("admin:memories_memoryversion_changelist")).content.decode()
    assert pending.pk not in versions and rejected.pk not in versions and approved.pk in versions
    reviewer = _staff_client(django_user_model, review_workspace, "reviewer",
                             [*viewer, "view_reviewitem", "change_reviewitem"])
    html = reviewer.get(memories).content.decode()
    assert pending.pk in html and rejected.pk in html
    assert "Pending: locker code 4711." in reviewer.get(
        reverse("admin:memories_memoryitem_change", args=[pending.pk])).content.decode()


def _queue_row(html: str, memory_id: str) -> str:
    start = html.index(f'value="{memory_id}"')
    return html[start:html.index("</tr>", start)]


def test_review_queue_shows_the_floors_an_item_came_from(admin_client, review_workspace):
    _, messages = written_floors(review_workspace, "trip:u-ana:c1",
                                 [f"Floor {n}: words of turn {n}." for n in range(1, 13)])
    fact = MemoryItemFactory(workspace=review_workspace, content="User prefers window seats.", status="pending",
                             source_message_id=messages[10].pk, sources=[messages[10].pk])
    summary = MemoryItemFactory(
        workspace=review_workspace, content="Facts: " + "; ".join(f"turn {i}" for i in range(12)), status="pending",
        type="summary", summary_tier="micro", coverage_start_floor_no=1, coverage_end_floor_no=12,
        source_message_id=messages[11].pk, sources=[m.pk for m in messages[::2]],
    )
    html = admin_client.get(reverse("admin:memories_reviewitem_changelist")).content.decode()
    row = _queue_row(html, fact.pk)
    # Its floor, and a short excerpt of the one before it: nothing else.
    assert "Floor 11: words of turn 11." in row and "#10 · assistant: Floor 10: words of turn 10." in row
    assert "Floor 9:" not in row and "Floor 12:" not in row
    row = _queue_row(html, summary.pk)
    # A summary of twelve floors is shown beside the floors it covers and its
    # first sources, never beside its last floor alone.
    assert "summarizes" in row and "floors 1–12" in row and "6 source messages" in row
    assert "Floor 1: words" in row and "Floor 3: words" in row and "Floor 5: words" in row
    assert "Floor 7: words" not in row and "3 more source floors" in row
    assert "Floor 12: words" not in row
    # The item's own page: the same context with more of its sources.
    page = admin_client.get(reverse("admin:memories_reviewitem_change", args=[quote(summary.pk)])).content.decode()
    panel = page[page.index('id="review-context"'):page.index('id="memory-source"')]
    assert all(f"Floor {n}: words" in panel for n in (1, 3, 5, 7, 9, 11))
    assert "Floor 12: words" not in panel and "more source floor" not in panel
    assert "Summarizes floors 1–12" in page


def test_redact_history_of_a_one_version_memory_offers_its_current_content(admin_client, make_memory):
    url = reverse("admin:memories_memoryitem_changelist")
    item = make_memory("Card 4111 1111 1111 1111 on file.")
    html = run_action(admin_client, url, "redact_history", [item.pk]).content.decode()
    assert "Nothing to do" not in html
    assert "no earlier version holding text" in html and "Card 4111 1111 1111 1111 on file." in html
    assert 'id="redact-current"' in html and "Yes, redact the current content (1 memory)" in html
    assert 'id="redact-history-only"' not in html
    assert MemoryVersion.objects.get(memory_id=item.pk).content  # nothing changed yet
    response = run_action(admin_client, url, "redact_history", [item.pk], confirm=True, redact="current")
    assert only_message(response) == ("success", "Redact: 1 succeeded, 0 skipped, 0 failed.")
    item.refresh_from_db()
    assert item.content == "[redacted]" and item.version == 2
    v1, v2 = MemoryVersion.objects.filter(memory_id=item.pk).order_by("version")
    assert v1.content is None and v1.redacted_by_type == "user" and v2.content == "[redacted]"
    # Nothing left: the page says so instead of offering a redaction.
    html = run_action(admin_client, url, "redact_history", [item.pk]).content.decode()
    assert "already cleared" in html and 'id="redact-current"' not in html


def test_redact_history_and_current_content_together(admin_client, make_memory, edit_memory):
    url = reverse("admin:memories_memoryitem_changelist")
    edited = make_memory("Card 4111 on file.")
    edit_memory(edited, content="Card 4111 on file, expires 2027.")
    single = make_memory("Locker code 4711.")
    html = run_action(admin_client, url, "redact_history", [edited.pk, single.pk]).content.decode()
    assert "Yes, redact 1 earlier version" in html and "Redact the current content too (2 memories)" in html
    # History only: the current versions stay, as the button says.
    response = run_action(admin_client, url, "redact_history", [edited.pk, single.pk], confirm=True, redact="history")
    assert only_message(response) == ("success", "Redact: 1 succeeded, 1 skipped, 0 failed.")
    assert MemoryItem.objects.get(pk=single.pk).content == "Locker code 4711."
    response = run_action(admin_client, url, "redact_history", [edited.pk, single.pk], confirm=True, redact="current")
    assert only_message(response) == ("success", "Redact: 2 succeeded, 0 skipped, 0 failed.")
    assert not MemoryVersion.objects.filter(memory_id__in=[edited.pk, single.pk], content__contains="4").exists()


def test_redacting_current_content_needs_the_change_permission(make_memory, django_user_model, workspace):
    url = reverse("admin:memories_memoryitem_changelist")
    item = make_memory("Locker code 4711.")
    client = _staff_client(django_user_model, workspace, "redactor", ["view_memoryitem", "redact_memoryversion"])
    html = run_action(client, url, "redact_history", [item.pk]).content.decode()
    assert "You may not change these memories" in html and 'id="redact-current"' not in html
    response = run_action(client, url, "redact_history", [item.pk], confirm=True, redact="current")
    assert response.status_code == 403
    assert MemoryItem.objects.get(pk=item.pk).content == "Locker code 4711."


def test_redact_everywhere_counts_a_reworded_derived_memory_in_preview_and_result(
        admin_client, workspace, django_capture_on_commit_callbacks):
    _, (message,) = written_floors(workspace, "support:u1:c2", ["My locker code is 4711-9923."])
    # Made from the message, in other words: no search finds the text in it.
    reworded = MemoryItemFactory(workspace=workspace, content="The user has a locker.", source_message_id=message.pk,
                                 scope="chat", scope_id="support:u1:c2",
                                 sources=[message.pk])
    url = reverse("admin:memories_memoryitem_redact_everywhere")
    page = admin_client.post(url, {"workspace": workspace.pk, "text": "4711-9923"}).content.decode()
    sentence = re.search(r'It is in <span id="found-sentence">([^<]+)</span>', page).group(1)
    assert sentence == "1 message"
    question = page[page.index("confirm-question"):page.index("text-places")]
    assert "; 1 memory derived from what holds it" in question, question
    assert reworded.pk in page
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, {"workspace": workspace.pk, "text": "4711-9923", "confirmed": "True",
                                           "post": "yes"}, follow=True)
    assert only_message(response) == ("success", "Redacted the text everywhere in Acme: it was in 1 message; "
                                                 "1 memory derived from what held it erased and derived again. "
                                                 "None of it is left.")
    assert not MemoryItem.objects.filter(pk=reworded.pk).exists()


def test_redact_everywhere_preview_withholds_unapproved_text_from_operators_who_do_not_review(
        review_workspace, django_user_model):
    """The preview lists the memories holding the text; one awaiting review
    is named, and its text shown only to a reviewer."""
    pending = MemoryItemFactory(workspace=review_workspace, content="Pending: the gate code qx9931 and more words.",
                                status="pending")
    url = reverse("admin:memories_memoryitem_redact_everywhere")
    redactor = ["view_memoryitem", "change_memoryitem", "redact_memoryversion"]
    page = _staff_client(django_user_model, review_workspace, "redactor", redactor).post(
        url, {"workspace": review_workspace.pk, "text": "qx9931"}).content.decode()
    assert pending.pk in page and "shown to reviewers only" in page and "the gate code" not in page
    page = _staff_client(django_user_model, review_workspace, "reviewer",
                         [*redactor, "view_reviewitem", "change_reviewitem"]).post(
        url, {"workspace": review_workspace.pk, "text": "qx9931"}).content.decode()
    assert "the gate code" in page
