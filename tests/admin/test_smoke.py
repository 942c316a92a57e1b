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
