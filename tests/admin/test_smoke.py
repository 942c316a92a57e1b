import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_pages_render(admin_client, make_memory, conversation_with_floors, review_workspace):
    item = make_memory("咖啡 is the favourite drink", source_message_id=conversation_with_floors[2][0].pk)
    urls = [
        reverse("admin:index"),
        reverse("admin:memories_dashboard"),
        reverse("admin:memories_memoryitem_changelist"),
        reverse("admin:memories_memoryitem_change", args=[item.pk]),
        reverse("admin:memories_reviewitem_changelist"),
        reverse("admin:memories_memoryversion_changelist"),
        reverse("admin:memories_memoryedge_changelist"),
        reverse("admin:memories_memoryjob_changelist"),
        reverse("admin:memories_scopestate_changelist"),
        reverse("admin:memories_memorystore_changelist"),
        reverse("admin:conversations_conversation_changelist"),
        reverse("admin:conversations_conversation_change", args=[conversation_with_floors[0].pk]),
    ]
    for url in urls:
        response = admin_client.get(url)
        assert response.status_code == 200, url


def test_workspace_list_counts_pending_memories(admin_client, review_workspace, make_memory):
    make_memory("Waiting.", ws=review_workspace, lifecycle_status="pending")
    make_memory("Also waiting.", ws=review_workspace, lifecycle_status="pending")
    make_memory("Approved.", ws=review_workspace)
    response = admin_client.get(reverse("admin:accounts_workspace_changelist"))
    rows = {w.slug: w.pending_count for w in response.context["cl"].result_list}
    assert rows == {"acme": 0, "reviewed": 2}
    assert f"workspace__id__exact={review_workspace.pk}&amp;lifecycle_status__exact=pending" in response.content.decode()
