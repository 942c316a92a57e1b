"""The conversation page (floors in order per branch, memories beside their
floor, the rolling summary) and the dashboard's figures."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.services import workspace_membership_add
from conversations.models import Branch, Conversation, Message
from memories.models import MemoryItem, MemoryJob, ScopeState
from memories.services.scopes import branch_scope_id
from tests.factories import MemoryItemFactory

pytestmark = pytest.mark.django_db
CONVERSATIONS = "/admin/conversations/conversation/"


def test_conversation_list_and_search(admin_client, conversation_with_floors):
    response = admin_client.get(CONVERSATIONS, {"q": "chat-4"})
    assert [c.external_id for c in response.context["cl"].result_list] == ["chat-42"]
    response = admin_client.get(CONVERSATIONS, {"summary": "no"})
    assert list(response.context["cl"].result_list) == []


def test_floors_with_their_memories_and_summary(admin_client, make_memory, conversation_with_floors):
    conversation, branch, messages = conversation_with_floors
    fact = make_memory("喜欢喝咖啡", fact_key="drink", source_message_id=messages[0].pk)
    summary = make_memory(
        "Coffee and Lisbon.",
        type="summary",
        summary_tier="micro",
        scope="branch",
        scope_id=branch_scope_id("chat-42", "main"),
        coverage_start_floor_no=1,
        coverage_end_floor_no=4,
    )
    unrelated = make_memory("Another conversation's fact.", source_message_id="msg_elsewhere")
    response = admin_client.get(reverse("admin:conversations_conversation_change", args=[conversation.pk]))
    assert response.status_code == 200
    floors = response.context["floors"]
    assert [f.message.floor_no for f in floors] == [1, 2, 3, 4]
    assert [m.pk for m in floors[0].memories] == [fact.pk]
    assert [m.pk for m in floors[3].memories] == [summary.pk]
    assert unrelated.pk not in response.content.decode()
    html = response.content.decode()
    assert "你好，我喜欢喝咖啡" in html
    assert "User likes coffee and lives in Lisbon." in html
    assert f'id="floor-{branch.pk}-3"' in html


def test_fork_branch_and_paging(admin_client, workspace, conversation_with_floors, settings):
    conversation, main, messages = conversation_with_floors
    fork = Branch.objects.create(
        conversation=conversation, name="alt", parent=main, fork_message_id=messages[1].pk, fork_floor_no=2, next_floor_no=4
    )
    Message.objects.create(workspace=workspace, conversation=conversation, branch=fork, floor_no=3, role="user", content=[{"type": "text", "text": "Actually, Madrid."}])
    url = reverse("admin:conversations_conversation_change", args=[conversation.pk])
    response = admin_client.get(url, {"branch": fork.pk})
    floors = response.context["floors"]
    assert [(f.message.floor_no, f.message.branch_id) for f in floors] == [(1, main.pk), (2, main.pk), (3, fork.pk)]
    assert floors[2].text == "Actually, Madrid."
    response = admin_client.get(url, {"branch": main.pk, "after": 2})
    assert [f.message.floor_no for f in response.context["floors"]] == [3, 4]
    assert response.context["prev_after"] == 0
    response = admin_client.get(url, {"branch": "nonsense", "after": "x"})
    assert response.status_code == 200 and len(response.context["floors"]) == 4


def test_conversation_page_query_count_is_bounded(admin_client, workspace, conversation_with_floors, make_memory, django_assert_max_num_queries):
    conversation, branch, messages = conversation_with_floors
    for message in messages:
        make_memory(f"About {message.pk}", source_message_id=message.pk)
    url = reverse("admin:conversations_conversation_change", args=[conversation.pk])
    with django_assert_max_num_queries(20):
        assert admin_client.get(url).status_code == 200


def test_dashboard_figures(admin_client, workspace, review_workspace, make_memory, other_workspace):
    make_memory("Fact one.")
    make_memory("Fact two.", status="deprecated")
    make_memory("Summary.", type="summary", summary_tier="micro")
    make_memory("Pending review.", ws=review_workspace, lifecycle_status="pending")
    old = make_memory("Created long ago.")
    MemoryItem.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=45))
    MemoryJob.objects.create(workspace=workspace, kind="extract", scope="chat", scope_id="a", input_tokens=1000, output_tokens=200, status="succeeded")
    MemoryJob.objects.create(workspace=workspace, kind="extract", scope="chat", scope_id="b", input_tokens=500, output_tokens=50, status="failed", error="x")
    MemoryJob.objects.create(workspace=other_workspace, kind="compact", scope="chat", scope_id="c")
    ScopeState.objects.create(workspace=workspace, scope="chat", scope_id="a", micro_count=50)
    ScopeState.objects.create(workspace=workspace, scope="chat", scope_id="b", micro_count=1)
    response = admin_client.get(reverse("admin:memories_dashboard"))
    assert response.status_code == 200
    ctx = response.context
    assert ctx["review_queue"] == 1
    assert ctx["jobs"] == {"pending": 1, "running": 0, "succeeded": 1, "failed": 1, "cancelled": 0}
    assert ctx["due_count"] == 1
    totals = {kind: (counts, total) for kind, counts, total in ctx["totals"]["rows"]}
    statuses = ctx["totals"]["statuses"]
    assert totals["fact"][1] == 4 and totals["fact"][0][statuses.index("deprecated")] == 1
    assert ctx["totals"]["grand_total"] == 5
    tokens = {row["workspace__name"]: (row["input"], row["output"]) for row in ctx["tokens"]}
    assert tokens == {"Acme": (1500, 250)}
    assert len(ctx["bars"]) == 30 and ctx["bars"][-1].value == 4 and ctx["chart_total"] == 4
    html = response.content.decode()
    created = html[html.index('id="created-chart"') : html.index('id="failure-chart"')]
    assert created.count("<rect") == 30
    response = admin_client.get(reverse("admin:memories_dashboard"), {"workspace": review_workspace.pk})
    assert response.context["totals"]["grand_total"] == 1


def test_dashboard_is_linked_from_the_index(admin_client):
    html = admin_client.get(reverse("admin:index")).content.decode()
    assert reverse("admin:memories_dashboard") in html
    assert reverse("admin:memories_reviewitem_changelist") in html


def test_unapproved_memories_beside_floors_are_shown_to_reviewers_only(review_workspace, django_user_model):
    """In a workspace that requires review, the conversation page shows an
    operator who does not review only what was approved beside each floor;
    pending and rejected memories stay for reviewers."""
    conversation = Conversation.objects.create(workspace=review_workspace, external_id="rev-1", message_count=1)
    branch = Branch.objects.create(conversation=conversation, name="main", next_floor_no=2)
    message = Message.objects.create(workspace=review_workspace, conversation=conversation, branch=branch,
                                     floor_no=1, role="user", content="My locker code is 4711.")

    def derived(content, **fields):
        return MemoryItemFactory(workspace=review_workspace, content=content, source_message_id=message.pk, **fields)

    approved = derived("Approved: the user has a locker.")
    pending = derived("Pending: locker code 4711.", status="pending")
    rejected = derived("Rejected: locker code 4711 again.", status="pending")
    rejected.lifecycle_status = "deprecated"
    rejected.status = "deprecated"
    rejected.save(update_fields=["lifecycle_status", "status"])

    def page_for(name, codenames):
        user = django_user_model.objects.create_user(name, password="x", is_staff=True)
        user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
        workspace_membership_add(user=user, workspace=review_workspace)
        client = Client()
        client.force_login(django_user_model.objects.get(pk=user.pk))
        response = client.get(reverse("admin:conversations_conversation_change", args=[conversation.pk]))
        assert response.status_code == 200
        return [m.pk for m in response.context["floors"][0].memories]

    viewer = ["view_conversation", "view_memoryitem"]
    assert page_for("viewer", viewer) == [approved.pk]
    assert set(page_for("reviewer", [*viewer, "view_reviewitem", "change_reviewitem"])) == {
        approved.pk, pending.pk, rejected.pk}
