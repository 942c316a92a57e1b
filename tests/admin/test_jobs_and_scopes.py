"""Jobs and scope state: status filters, full errors, links to the scope's
memories, retry / cancel, compact / rebuild (rebuild asks first)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memories.models import MemoryJob, ScopeState
from memories.services.scopes import branch_scope_id
from tests.admin.helpers import only_message, run_action

JOBS = "/admin/memories/memoryjob/"
SCOPES = "/admin/memories/scopestate/"
pytestmark = pytest.mark.django_db

LONG_ERROR = "Traceback (most recent call last):\n" + "\n".join(f"  frame {i}" for i in range(40)) + "\nRuntimeError: boom"


@pytest.fixture
def jobs(workspace):
    return {
        "failed": MemoryJob.objects.create(
            workspace=workspace, kind="extract", scope="chat", scope_id="chat-1", status="failed", error=LONG_ERROR
        ),
        "pending": MemoryJob.objects.create(workspace=workspace, kind="compact", scope="chat", scope_id="chat-2"),
        "running": MemoryJob.objects.create(
            workspace=workspace, kind="extract", scope="chat", scope_id="chat-3", status="running"
        ),
        "done": MemoryJob.objects.create(
            workspace=workspace, kind="extract", scope="chat", scope_id="chat-4", status="succeeded",
            input_tokens=1200, output_tokens=300,
        ),
    }


def test_job_list_and_status_filter(admin_client, jobs):
    response = admin_client.get(JOBS)
    assert response.status_code == 200
    html = response.content.decode()
    assert "1,200 / 300 tokens" in html
    assert "RuntimeError: boom" in html and "frame 39" not in html  # the exception line only
    response = admin_client.get(JOBS, {"status__exact": "failed"})
    assert [j.pk for j in response.context["cl"].result_list] == [jobs["failed"].pk]
    response = admin_client.get(JOBS, {"q": "RuntimeError"})
    assert [j.pk for j in response.context["cl"].result_list] == [jobs["failed"].pk]


def test_job_page_shows_the_whole_error_and_scope_link(admin_client, jobs):
    response = admin_client.get(reverse("admin:memories_memoryjob_change", args=[jobs["failed"].pk]))
    html = response.content.decode()
    assert "frame 39" in html and "RuntimeError: boom" in html
    assert "/admin/memories/memoryitem/?scope__exact=chat&amp;scope_id=chat-1" in html
    assert 'name="_save"' not in html  # read-only


def test_retry_and_cancel(admin_client, jobs, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = run_action(admin_client, JOBS, "retry_jobs", [jobs["failed"].pk, jobs["done"].pk])
    assert only_message(response) == ("success", "Retry: 1 succeeded, 1 skipped, 0 failed.")
    assert len(callbacks) == 1  # the retried job is queued after commit
    failed = MemoryJob.objects.get(pk=jobs["failed"].pk)
    assert (failed.status, failed.error) == ("pending", "")
    response = run_action(admin_client, JOBS, "cancel_jobs", [jobs["pending"].pk, jobs["running"].pk, jobs["done"].pk])
    assert only_message(response) == ("success", "Cancel: 2 succeeded, 1 skipped, 0 failed.")
    assert MemoryJob.objects.get(pk=jobs["pending"].pk).status == "cancelled"
    running = MemoryJob.objects.get(pk=jobs["running"].pk)
    assert running.status == "running" and running.cancel_requested


def test_retry_refused_when_the_scope_has_a_pending_job(admin_client, workspace):
    old = MemoryJob.objects.create(workspace=workspace, kind="extract", scope="chat", scope_id="c", status="failed")
    MemoryJob.objects.create(workspace=workspace, kind="extract", scope="chat", scope_id="c")
    response = run_action(admin_client, JOBS, "retry_jobs", [old.pk])
    level, text = only_message(response)
    assert level == "error" and "0 succeeded, 0 skipped, 1 failed" in text and "already pending" in text


@pytest.fixture
def scopes(workspace, conversation_with_floors, settings):
    settings.MEMORY_COMPACT_MIN_MICROS = 8
    conversation = conversation_with_floors[0]
    return {
        "branch": ScopeState.objects.create(
            workspace=workspace, scope="branch", scope_id=branch_scope_id(conversation.external_id, "main"),
            # Four floors appended, none read yet: pending work comes from the branch.
            conversation=conversation, branch=conversation.branches.get(name="main"), micro_count=9,
        ),
        "chat": ScopeState.objects.create(workspace=workspace, scope="chat", scope_id="chat-quiet", micro_count=1),
    }


def test_scope_list_filters(admin_client, scopes):
    response = admin_client.get(SCOPES)
    assert response.status_code == 200
    assert "chat-42" in response.content.decode()
    due = admin_client.get(SCOPES, {"compaction": "due"})
    assert [s.pk for s in due.context["cl"].result_list] == [scopes["branch"].pk]
    caught_up = admin_client.get(SCOPES, {"backlog": "caught_up"})
    assert [s.pk for s in caught_up.context["cl"].result_list] == [scopes["chat"].pk]


def test_compact_and_rebuild(admin_client, scopes, make_memory):
    make_memory("A chat memory.", scope="chat", scope_id="chat-quiet")
    response = run_action(admin_client, SCOPES, "compact_scopes", [scopes["branch"].pk, scopes["chat"].pk])
    assert only_message(response) == ("success", "Queue compaction: 2 succeeded, 0 skipped, 0 failed.")
    assert MemoryJob.objects.filter(kind="compact", status="pending").count() == 2
    response = run_action(admin_client, SCOPES, "rebuild_scopes", [scopes["branch"].pk, scopes["chat"].pk])
    assert "Re-derive these scopes" in response.content.decode()
    assert not MemoryJob.objects.filter(kind="rebuild").exists()
    response = run_action(admin_client, SCOPES, "rebuild_scopes", [scopes["branch"].pk, scopes["chat"].pk], confirm=True)
    level, text = only_message(response)
    assert level == "warning" and text.startswith("Queue rebuild: 1 succeeded, 0 skipped, 1 failed.")
    assert MemoryJob.objects.filter(kind="rebuild", scope="branch").count() == 1
