"""The review queue: pending memories of workspaces that require review;
approve, edit-and-approve and reject, each recorded as a version by the reviewer."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memories.models import MemoryItem, MemoryVersion
from tests.admin.helpers import only_message, run_action

URL = "/admin/memories/reviewitem/"
pytestmark = pytest.mark.django_db


@pytest.fixture
def queue(review_workspace, workspace, make_memory):
    return {
        "shaky": make_memory("Maybe allergic to nuts.", ws=review_workspace, lifecycle_status="pending", confidence=0.3),
        "sure": make_memory("Lives in Porto.", ws=review_workspace, lifecycle_status="pending", confidence=0.9),
        "active": make_memory("Already approved.", ws=review_workspace),
        "unreviewed": make_memory("Pending, but nobody reviews here.", lifecycle_status="pending"),
    }


def ids(response) -> list[str]:
    return [item.pk for item in response.context["cl"].result_list]


def test_queue_holds_only_what_needs_review(admin_client, queue):
    response = admin_client.get(URL)
    assert response.status_code == 200
    assert ids(response) == [queue["shaky"].pk, queue["sure"].pk]  # least certain first
    assert "Maybe allergic to nuts." in response.content.decode()


def test_approve_and_reject(admin_client, queue, admin_user):
    response = run_action(admin_client, URL, "approve_selected", [queue["sure"].pk])
    assert only_message(response) == ("success", "Approve: 1 succeeded, 0 skipped, 0 failed.")
    response = run_action(admin_client, URL, "reject_selected", [queue["shaky"].pk])
    assert only_message(response) == ("success", "Reject: 1 succeeded, 0 skipped, 0 failed.")
    sure, shaky = MemoryItem.objects.get(pk=queue["sure"].pk), MemoryItem.objects.get(pk=queue["shaky"].pk)
    assert (sure.status, sure.lifecycle_status) == ("active", "active")
    assert (shaky.status, shaky.lifecycle_status) == ("deprecated", "deprecated")
    for item in (sure, shaky):
        head = MemoryVersion.objects.get(pk=item.current_version_id)
        assert (head.version, head.actor_type, head.actor_user_id) == (2, "user", admin_user.pk)
    assert ids(admin_client.get(URL)) == []


def test_edit_and_approve_is_one_version(admin_client, queue, admin_user):
    item = queue["shaky"]
    url = reverse("admin:memories_reviewitem_change", args=[item.pk])
    page = admin_client.get(url).content.decode()
    assert 'name="_approve"' in page and 'name="_reject"' in page
    data = {
        "content": "Allergic to peanuts (confirmed).",
        "expected_version": 1,
        "summary_tier": "",
        "fact_key": "",
        "importance": "0.9",
        "confidence": "1",
        "status": "active",
        "lifecycle_status": "pending",
        "_approve": "Save and approve",
    }
    response = admin_client.post(url, data)
    assert response.status_code == 302 and response["Location"] == URL
    item.refresh_from_db()
    assert (item.content, item.lifecycle_status, item.confidence, item.version) == (
        "Allergic to peanuts (confirmed).",
        "active",
        1.0,
        2,
    )
    head = MemoryVersion.objects.get(pk=item.current_version_id)
    assert head.actor_user_id == admin_user.pk and head.attributes["lifecycle_status"] == "active"


def test_reject_from_the_page(admin_client, queue):
    item = queue["sure"]
    url = reverse("admin:memories_reviewitem_change", args=[item.pk])
    data = {
        "content": item.content,
        "expected_version": 1,
        "summary_tier": "",
        "fact_key": "",
        "importance": item.importance,
        "confidence": item.confidence,
        "status": "active",
        "lifecycle_status": "pending",
        "_reject": "Reject",
    }
    response = admin_client.post(url, data)
    assert response.status_code == 302
    item.refresh_from_db()
    assert item.status == "deprecated"


def test_decided_item_opens_on_the_memory_page(admin_client, queue):
    response = admin_client.get(reverse("admin:memories_reviewitem_change", args=[queue["active"].pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:memories_memoryitem_change", args=[queue["active"].pk])


def test_approve_outside_the_queue_is_skipped(admin_client, queue):
    # The action runs over the queue's own queryset: a memory outside it is not touched.
    response = run_action(admin_client, URL, "approve_selected", [queue["unreviewed"].pk])
    assert MemoryItem.objects.get(pk=queue["unreviewed"].pk).lifecycle_status == "pending"
    assert response.status_code == 200
