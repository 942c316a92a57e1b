"""Maintenance: conversation expiry, the expired store-item sweep, and pending
jobs whose broker message was lost being dispatched again."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from accounts.actors import Actor
from conversations.models import Conversation, Message
from framework_state.services.store import store_batch
from memories.models import JobKind, JobStatus, MemoryItem, MemoryJob, MemoryVersion
from memories.services.jobs import (
    PENDING_REDISPATCH_AFTER,
    memory_job_enqueue,
    memory_job_start,
    memory_jobs_redispatch_pending,
)
from memories.services.pipeline.execute import memory_job_execute
from memories.services.pipeline.maintenance import conversations_expire, items_sweep_expired
from memories.services.scopes import branch_scope_id
from tests.factories import append_messages
from tests.memories.pipeline_helpers import eager_celery

pytestmark = pytest.mark.django_db

LONG_AGO = PENDING_REDISPATCH_AFTER + timedelta(seconds=1)


def _backdate_job(job: MemoryJob, by: timedelta) -> None:
    # `update()` skips `auto_now`: this is the only way to age a row in a test.
    MemoryJob.objects.filter(pk=job.pk).update(updated_at=timezone.now() - by)


def _pending(workspace, scope_id: str = '["c","main"]', kind: str = "extract") -> MemoryJob:
    return MemoryJob.objects.create(workspace=workspace, kind=kind, scope="branch", scope_id=scope_id)


# --- Conversation expiry -------------------------------------------------------


def _conversation(workspace, external_id: str, *, idle: timedelta | None, messages: int = 1) -> Conversation:
    if messages:
        append_messages(workspace, external_id, [{"role": "user", "content": f"hello {n}"} for n in range(messages)])
        conversation = Conversation.objects.get(workspace=workspace, external_id=external_id)
    else:
        conversation = Conversation.objects.create(workspace=workspace, external_id=external_id)
    if idle is not None:
        when = timezone.now() - idle
        Conversation.objects.filter(pk=conversation.pk).update(
            created_at=when, last_message_at=when if messages else None
        )
    return conversation


def test_conversations_never_expire_by_default(workspace, settings):
    settings.MEMORY_CONVERSATION_EXPIRE_DAYS = 0
    _conversation(workspace, "ancient", idle=timedelta(days=3650))
    assert conversations_expire() == 0
    assert Conversation.objects.filter(external_id="ancient").exists()


def test_idle_conversations_expire_with_their_messages(workspace, other_workspace, settings,
                                                       django_capture_on_commit_callbacks):
    settings.MEMORY_CONVERSATION_EXPIRE_DAYS = 30
    with django_capture_on_commit_callbacks(execute=False):
        old = _conversation(workspace, "old", idle=timedelta(days=31), messages=2)
        _conversation(other_workspace, "old-elsewhere", idle=timedelta(days=45))
        _conversation(workspace, "empty-old", idle=timedelta(days=31), messages=0)
        _conversation(workspace, "recent", idle=timedelta(days=29))
        _conversation(workspace, "empty-new", idle=None, messages=0)
        # Created long ago but talked to yesterday: activity is what counts.
        revived = _conversation(workspace, "revived", idle=timedelta(days=1))
        Conversation.objects.filter(pk=revived.pk).update(created_at=timezone.now() - timedelta(days=90))
        pending = _pending(workspace, scope_id=branch_scope_id("old", "main"))

    with django_capture_on_commit_callbacks(execute=True):
        assert conversations_expire() == 3
    assert set(Conversation.objects.values_list("external_id", flat=True)) == {"recent", "empty-new", "revived"}
    assert not Message.objects.filter(conversation_id=old.pk).exists()
    # The expired conversation's queued extraction has nothing left to read.
    pending.refresh_from_db()
    assert pending.status == JobStatus.CANCELLED
    assert conversations_expire() == 0


def test_conversation_expiry_is_measured_from_now_given(workspace, settings):
    settings.MEMORY_CONVERSATION_EXPIRE_DAYS = 7
    _conversation(workspace, "c", idle=timedelta(days=1))
    assert conversations_expire(now=timezone.now() + timedelta(days=5)) == 0
    assert conversations_expire(now=timezone.now() + timedelta(days=7)) == 1
    assert not Conversation.objects.exists()


# --- Expired store items ------------------------------------------------------


def _put(workspace, key: str, ttl: float | None) -> MemoryItem:
    op = {"op": "put", "namespace": ["prefs"], "key": key, "value": {"v": key}}
    if ttl is not None:
        op["ttl"] = ttl
    store_batch(workspace=workspace, store_id=None, ops=[op], actor=Actor.system(), read_only=False)
    return MemoryItem.objects.get(workspace=workspace, path=f"/prefs/{key}")


def test_sweep_deletes_only_expired_store_items_with_a_version(workspace, other_workspace):
    short = _put(workspace, "short", ttl=1)
    long = _put(workspace, "long", ttl=60)
    forever = _put(workspace, "forever", ttl=None)
    elsewhere = _put(other_workspace, "short", ttl=1)
    assert short.expires_at is not None and forever.expires_at is None

    assert items_sweep_expired() == 0  # nothing has expired yet
    later = timezone.now() + timedelta(minutes=2)
    assert items_sweep_expired(now=later) == 2
    assert set(MemoryItem.objects.values_list("pk", flat=True)) == {long.pk, forever.pk}
    for gone in (short, elsewhere):
        version = MemoryVersion.objects.get(memory_id=gone.pk, operation="deleted")
        assert version.workspace_id == gone.workspace_id and version.actor_type == "system"
    assert items_sweep_expired(now=later) == 0


def test_sweep_spans_more_than_one_delete_chunk(workspace, settings):
    from memories.services.pipeline import maintenance

    items = [_put(workspace, f"k{n}", ttl=1) for n in range(5)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(maintenance, "DELETE_CHUNK", 2)
        assert items_sweep_expired(now=timezone.now() + timedelta(minutes=2)) == len(items)
    assert not MemoryItem.objects.exists()


# --- Pending jobs whose message was lost --------------------------------------


def test_maintenance_dispatches_again_only_jobs_pending_too_long(workspace, django_capture_on_commit_callbacks):
    stale = _pending(workspace, scope_id='["a","main"]')
    fresh = _pending(workspace, scope_id='["b","main"]')
    running = MemoryJob.objects.create(workspace=workspace, kind="extract", scope="branch", scope_id='["c","main"]',
                                       status=JobStatus.RUNNING)
    maintenance = _pending(workspace, kind=JobKind.MAINTENANCE, scope_id="")
    for job in (stale, running, maintenance):
        _backdate_job(job, LONG_AGO)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert memory_jobs_redispatch_pending() == 1
    assert len(callbacks) == 1
    stale.refresh_from_db()
    assert stale.status == JobStatus.PENDING and stale.updated_at > timezone.now() - timedelta(minutes=1)
    # Dispatched again just now: the next tick leaves it alone.
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert memory_jobs_redispatch_pending() == 0
    assert callbacks == []
    assert MemoryJob.objects.get(pk=fresh.pk).status == JobStatus.PENDING
    assert MemoryJob.objects.get(pk=running.pk).status == JobStatus.RUNNING


def test_enqueue_dispatches_again_a_job_pending_too_long(workspace, django_capture_on_commit_callbacks):
    first, created = memory_job_enqueue(workspace=workspace, kind="extract", scope="branch", scope_id="x")
    assert created
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        again, created = memory_job_enqueue(workspace=workspace, kind="extract", scope="branch", scope_id="x")
    assert again.pk == first.pk and not created and callbacks == []  # recently dispatched: coalesced

    _backdate_job(first, LONG_AGO)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        again, created = memory_job_enqueue(workspace=workspace, kind="extract", scope="branch", scope_id="x")
    assert again.pk == first.pk and not created and len(callbacks) == 1
    assert MemoryJob.objects.filter(kind="extract").count() == 1


def test_redispatched_message_starts_only_a_pending_job(workspace):
    job = _pending(workspace)
    started = memory_job_start(job_id=job.pk)
    assert started.status == JobStatus.RUNNING and started.attempts == 1
    # The original message arrives after all: a worker has the job, leave it.
    assert memory_job_start(job_id=job.pk, redispatch=True) is None
    memory_job_execute(job_id=job.pk, redispatch=True)
    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING and job.attempts == 1
    # A broker redelivery (acks_late, worker died) still reclaims it.
    assert memory_job_start(job_id=job.pk).attempts == 2

    finished = MemoryJob.objects.create(workspace=workspace, kind="extract", scope="branch", scope_id="y",
                                        status=JobStatus.SUCCEEDED)
    assert memory_job_start(job_id=finished.pk, redispatch=True) is None
    assert memory_job_start(job_id=_pending(workspace, scope_id="z").pk, redispatch=True).status == JobStatus.RUNNING


def test_lost_extraction_runs_after_the_next_maintenance(workspace, django_capture_on_commit_callbacks):
    scope_id = branch_scope_id("lost", "main")
    with override_settings(MEMORY_EXTRACT_MIN_FLOORS=3):
        with django_capture_on_commit_callbacks(execute=False) as after_appends:
            append_messages(workspace, "lost", [{"role": "user", "content": f"I like plant number {n}."} for n in range(2)]
                       + [{"role": "user", "content": "My locker code is 4242."}])
        with django_capture_on_commit_callbacks(execute=False) as dispatches:
            for callback in after_appends:
                callback()
        # The extraction's message is dropped: the broker never got it.
        assert len(dispatches) == 1
        lost = MemoryJob.objects.get(kind="extract", scope_id=scope_id)
        assert lost.status == JobStatus.PENDING
        _backdate_job(lost, LONG_AGO)

        with eager_celery(), django_capture_on_commit_callbacks(execute=True):
            maintenance, _ = memory_job_enqueue(workspace=None, kind=JobKind.MAINTENANCE)
        maintenance.refresh_from_db()
        assert maintenance.status == JobStatus.SUCCEEDED and maintenance.result["redispatched"] == 1
    lost.refresh_from_db()
    assert lost.status == JobStatus.SUCCEEDED and lost.attempts == 1
    assert MemoryItem.objects.filter(workspace=workspace, scope_id=scope_id, fact_key="user.locker_code").exists()
