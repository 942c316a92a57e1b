"""In a workspace that requires review, nothing awaiting review becomes active
except by an operator's approval, on any route, and nothing awaiting review
reports itself as `active`."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from accounts.actors import Actor
from accounts.services import workspace_membership_add
from memories.models import MemoryItem, MemoryVersion
from memories.services.items import memory_item_create, memory_item_restore, memory_item_update
from memories.services.items_batch import memory_items_set_lifecycle, memory_items_set_status
from memory_project.errors import ConflictError
from tests.admin.helpers import run_action
from tests.memories.helpers_items import AGENT, error_type

pytestmark = pytest.mark.django_db
JOB = Actor.for_job("job_1")


@pytest.fixture
def pending(workspace):
    """A memory the pipeline extracted into review."""
    workspace.requires_review = True
    workspace.save(update_fields=["requires_review"])
    return memory_item_create(
        workspace=workspace, actor=JOB, scope="chat", scope_id="c1", type="fact",
        content="Allergic to peanuts", lifecycle_status="pending",
    )


def _state(item) -> tuple[str, str]:
    row = MemoryItem.objects.get(pk=item.pk)
    return row.status, row.lifecycle_status


def test_pending_reports_pending_in_items_lists_stats_and_filters(api, pending, workspace):
    memory_item_create(workspace=workspace, actor=AGENT, scope="chat", scope_id="c1", type="fact", content="Likes tea")
    assert api.get(f"/v1/memories/{pending.pk}").json()["data"]["status"] == "pending"
    listed = {row["id"]: row["status"] for row in api.get("/v1/memories").json()["data"]}
    assert listed[pending.pk] == "pending" and "active" in listed.values()
    active_ids = {row["id"] for row in api.get("/v1/memories", {"status": "active"}).json()["data"]}
    assert pending.pk not in active_ids and len(active_ids) == 1
    assert [row["id"] for row in api.get("/v1/memories", {"status": "pending"}).json()["data"]] == [pending.pk]
    stats = api.get("/v1/memories/stats").json()["data"]
    assert (stats["active"], stats["pending"], stats["deprecated"]) == (1, 1, 0)
    assert api.get("/v1/memories/stats", {"status": "active"}).json()["data"]["total"] == 1
    assert error_type(api.get("/v1/memories", {"status": "approved"})) == "invalid_request_error"


def test_every_api_route_to_active_is_refused(api, pending):
    url = f"/v1/memories/{pending.pk}"
    for body in ({"status": "active"}, {"lifecycle_status": "active"}, {"lifecycle_status": "compacted"}):
        assert api.patch(url, body, format="json").status_code == 409, body
    batch = {"ids": [pending.pk], "status": "active"}
    assert api.patch("/v1/memories/batch/status", batch, format="json").status_code == 409
    assert _state(pending) == ("active", "pending")
    # Rejecting is anyone's right; reviving a rejected memory is an approval.
    assert api.patch(url, {"status": "deprecated"}, format="json").json()["data"]["status"] == "deprecated"
    for body in ({"status": "active"}, {"lifecycle_status": "active"}, {"lifecycle_status": "compacted"}):
        assert api.patch(url, body, format="json").status_code == 409, body
    assert api.patch("/v1/memories/batch/status", batch, format="json").status_code == 409
    # Restoring the first version brings the memory back to review, not to active.
    first = MemoryVersion.objects.get(memory_id=pending.pk, version=1)
    response = api.post(f"{url}/restore", {"version_id": first.pk}, format="json")
    assert response.status_code == 200 and response.json()["data"]["status"] == "pending"
    assert _state(pending) == ("active", "pending")


def test_services_refuse_jobs_and_agents_but_record_operator_approval(pending, workspace, admin_user):
    for actor in (AGENT, JOB):
        with pytest.raises(ConflictError):
            memory_items_set_status(workspace=workspace, actor=actor, ids=[pending.pk], status="active")
        with pytest.raises(ConflictError):
            memory_items_set_lifecycle(workspace=workspace, actor=actor, ids=[pending.pk], lifecycle_status="active")
    operator = Actor.for_user(admin_user.pk)
    result = memory_items_set_status(workspace=workspace, actor=operator, ids=[pending.pk], status="active")
    assert result.results[0]["changed"] and _state(pending) == ("active", "active")
    head = MemoryVersion.objects.filter(memory_id=pending.pk).order_by("-version").first()
    assert (head.actor_type, head.actor_user_id, head.attributes["lifecycle_status"]) == ("user", admin_user.pk, "active")
    # Once approved, an agent may deprecate and revive it like any memory.
    memory_item_update(workspace=workspace, actor=AGENT, memory_id=pending.pk, changes={"status": "deprecated"})
    memory_item_update(workspace=workspace, actor=AGENT, memory_id=pending.pk, changes={"status": "active"})
    assert _state(pending) == ("active", "active")


def test_sent_back_to_review_it_needs_approval_again(api, pending, workspace, admin_user):
    memory_items_set_lifecycle(
        workspace=workspace, actor=Actor.for_user(admin_user.pk), ids=[pending.pk], lifecycle_status="active"
    )
    url = f"/v1/memories/{pending.pk}"
    assert api.patch(url, {"status": "pending"}, format="json").json()["data"]["status"] == "pending"
    assert api.patch(url, {"status": "deprecated"}, format="json").status_code == 200
    assert api.patch(url, {"status": "active"}, format="json").status_code == 409
    # Restoring the approved version does not approve either.
    approved = MemoryVersion.objects.get(memory_id=pending.pk, attributes__lifecycle_status="active")
    memory_item_restore(workspace=workspace, actor=AGENT, memory_id=pending.pk, version_id=approved.pk)
    assert _state(pending) == ("deprecated", "deprecated")
    assert api.patch(url, {"status": "pending", "lifecycle_status": "active"}, format="json").status_code == 409


def test_admin_reactivate_is_an_approval_by_a_permitted_operator(pending, workspace, admin_client, admin_user):
    changelist = reverse("admin:memories_memoryitem_changelist")
    run_action(admin_client, changelist, "reactivate_selected", [pending.pk])
    assert _state(pending) == ("active", "active")
    head = MemoryVersion.objects.filter(memory_id=pending.pk).order_by("-version").first()
    assert (head.actor_type, head.actor_user_id) == ("user", admin_user.pk)


def test_admin_approval_needs_the_change_permission(pending, workspace):
    viewer = get_user_model().objects.create_user("viewer", password="x", is_staff=True)
    workspace_membership_add(user=viewer, workspace=workspace)
    from django.contrib.auth.models import Permission

    viewer.user_permissions.set(
        Permission.objects.filter(codename__in=["view_memoryitem", "view_reviewitem"], content_type__app_label="memories")
    )
    client = Client()
    client.force_login(viewer)
    for url, action in (
        (reverse("admin:memories_memoryitem_changelist"), "reactivate_selected"),
        (reverse("admin:memories_reviewitem_changelist"), "approve_selected"),
    ):
        assert run_action(client, url, action, [pending.pk]).status_code == 403
    assert _state(pending) == ("active", "pending")


def test_admin_status_filter_reports_pending(pending, workspace, admin_client):
    active = memory_item_create(
        workspace=workspace, actor=AGENT, scope="chat", scope_id="c1", type="fact", content="Lives in Porto"
    )
    changelist = reverse("admin:memories_memoryitem_changelist")
    shown = admin_client.get(changelist, {"status__exact": "active"}).content.decode()
    assert active.pk in shown and pending.pk not in shown
    shown = admin_client.get(changelist, {"status__exact": "pending"}).content.decode()
    assert pending.pk in shown and active.pk not in shown
