"""Service-level rules of spec 003's memory items."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.actors import Actor
from memories.models import MemoryItem, MemoryVersion
from memories.services.items import (
    memory_item_create,
    memory_item_delete,
    memory_item_restore,
    memory_item_update,
)
from memories.services.items_batch import (
    memory_items_delete,
    memory_items_mark_used,
    memory_items_set_lifecycle,
    memory_items_set_status,
)
from memory_project.errors import ConflictError, NotFoundError, PreconditionFailedError, ValidationError

pytestmark = pytest.mark.django_db
AGENT = Actor.for_api_key("apikey_test")
OPERATOR = Actor.for_user(1)


def _fact(workspace, **kwargs):
    defaults = {"scope": "chat", "scope_id": "conv-1", "type": "fact", "content": "likes tea"}
    defaults.update(kwargs)
    return memory_item_create(workspace=workspace, actor=AGENT, **defaults)


def test_create_normalizes_and_versions(workspace):
    item = _fact(workspace, fact_key="  Favorite   DRINK ", summary_tier="micro", content={"text": "喜欢咖啡"})
    assert item.fact_key == "favorite drink"
    assert item.summary_tier is None
    assert item.content == "喜欢咖啡"
    assert item.importance == 0.5 and item.confidence == 1.0
    assert item.status == "active" and item.lifecycle_status == "active"
    assert item.token_count_estimate == 4
    version = MemoryVersion.objects.get(memory_id=item.pk)
    assert version.operation == "created" and version.content == "喜欢咖啡"
    assert item.current_version_id == version.pk


def test_fact_key_is_dropped_for_non_facts(workspace):
    item = _fact(workspace, type="summary", summary_tier="macro", fact_key="k")
    assert item.fact_key is None and item.summary_tier == "macro"


@pytest.mark.parametrize(
    "content",
    [{"text": "a", "extra": 1}, {"other": "x"}, ["a"], 3, None, "   ", "x" * 102_401, "é" * 51_201],
)
def test_bad_content_is_refused(workspace, content):
    with pytest.raises(ValidationError):
        _fact(workspace, content=content)
    assert not MemoryItem.objects.exists()


def test_content_limit_is_bytes_inclusive(workspace):
    assert _fact(workspace, content="x" * 102_400).content_size_bytes == 102_400


@pytest.mark.parametrize(
    "kwargs",
    [
        {"scope": "store"},
        {"type": "document"},
        {"scope": "galaxy"},
        {"importance": 1.5},
        {"confidence": -0.1},
        {"importance": float("nan")},
        {"importance": True},
        {"scope": "branch", "scope_id": "not-json"},
        {"scope": "branch", "scope_id": '["only-one"]'},
        {"scope": "chat", "scope_id": ""},
        {"fact_key": "k" * 256},
        {"coverage_start_floor_no": 5, "coverage_end_floor_no": 2},
        {"status": "gone"},
        {"lifecycle_status": "zombie"},
    ],
)
def test_invalid_fields_are_400(workspace, kwargs):
    with pytest.raises(ValidationError):
        _fact(workspace, **kwargs)


def test_branch_scope_id_is_canonical(workspace):
    item = _fact(workspace, scope="branch", scope_id='[ "conv-1" , "main" ]')
    assert item.scope_id == '["conv-1","main"]'


@pytest.mark.parametrize(
    ("status", "lifecycle"),
    [("active", "deprecated"), ("deprecated", "active"), ("deprecated", "compacted"), ("deprecated", "pending")],
)
def test_contradictory_statuses_are_409(workspace, status, lifecycle):
    with pytest.raises(ConflictError):
        _fact(workspace, status=status, lifecycle_status=lifecycle)


def test_status_drives_lifecycle_but_not_the_reverse(workspace):
    item = _fact(workspace, status="deprecated")
    assert item.lifecycle_status == "deprecated"
    item = memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"status": "active"})
    assert (item.status, item.lifecycle_status) == ("active", "active")
    item = memory_item_update(
        workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"lifecycle_status": "deprecated"}
    )
    assert (item.status, item.lifecycle_status) == ("active", "deprecated")
    item = memory_item_update(
        workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"lifecycle_status": "compacted"}
    )
    item = memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"status": "active"})
    assert item.lifecycle_status == "compacted"


def test_pending_items_are_approved_only_by_operators(workspace):
    item = _fact(workspace, lifecycle_status="pending")
    for changes in ({"lifecycle_status": "active"}, {"lifecycle_status": "compacted"}, {"status": "active"}):
        with pytest.raises(ConflictError):
            memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes=changes)
    assert MemoryItem.objects.get(pk=item.pk).lifecycle_status == "pending"
    result = memory_items_set_lifecycle(workspace=workspace, actor=OPERATOR, ids=[item.pk], lifecycle_status="active")
    assert result.counts == {"total": 1, "updated": 1, "not_found": 0, "lifecycle_status": "active"}
    assert MemoryItem.objects.get(pk=item.pk).lifecycle_status == "active"


def test_update_rules_type_change_clears_tier_and_key(workspace):
    item = _fact(workspace, type="summary", summary_tier="micro")
    item = memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"type": "open_loop"})
    assert item.summary_tier is None
    item = memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"summary_tier": "macro"})
    assert item.summary_tier is None
    item = memory_item_update(
        workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"type": "fact", "fact_key": " A  B "}
    )
    assert item.fact_key == "a b"


def test_update_versions_and_noop(workspace):
    item = _fact(workspace)
    item = memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"importance": 0.9})
    assert item.version == 2
    same = memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"importance": 0.9})
    assert same.version == 2
    assert MemoryVersion.objects.filter(memory_id=item.pk).count() == 2
    with pytest.raises(ValidationError):
        memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes={})
    with pytest.raises(ValidationError):
        memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"version": 3})


def test_optimistic_concurrency(workspace):
    item = _fact(workspace)
    with pytest.raises(PreconditionFailedError):
        memory_item_update(
            workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"content": "x"}, expected_version=2
        )
    with pytest.raises(PreconditionFailedError):
        memory_item_update(
            workspace=workspace,
            actor=AGENT,
            memory_id=item.pk,
            changes={"content": "x"},
            expected_content_sha256="0" * 64,
        )
    updated = memory_item_update(
        workspace=workspace,
        actor=AGENT,
        memory_id=item.pk,
        changes={"content": "x"},
        expected_version=1,
        expected_content_sha256=item.content_sha256,
    )
    assert updated.content == "x" and updated.version == 2


def test_other_workspace_is_not_found(workspace, other_workspace):
    item = _fact(workspace)
    with pytest.raises(NotFoundError):
        memory_item_update(workspace=other_workspace, actor=AGENT, memory_id=item.pk, changes={"importance": 0})
    with pytest.raises(NotFoundError):
        memory_item_delete(workspace=other_workspace, actor=AGENT, memory_id=item.pk)


def test_delete_and_restore_recreates_same_id(workspace):
    item = _fact(workspace, content="first")
    item = memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"content": "second"})
    first = MemoryVersion.objects.get(memory_id=item.pk, version=1)
    memory_item_delete(workspace=workspace, actor=AGENT, memory_id=item.pk)
    assert not MemoryItem.objects.filter(pk=item.pk).exists()
    restored = memory_item_restore(workspace=workspace, actor=AGENT, memory_id=item.pk, version_id=first.pk)
    assert restored.pk == item.pk and restored.content == "first" and restored.version == 4
    # Recreated with its original creation time (that of its first version,
    # written in the creating transaction).
    assert MemoryItem.objects.get(pk=item.pk).created_at == first.created_at
    ops = list(MemoryVersion.objects.filter(memory_id=item.pk).order_by("version").values_list("operation", flat=True))
    assert ops == ["created", "modified", "deleted", "created"]


def test_restore_live_writes_modified(workspace):
    item = _fact(workspace, content="v1", importance=0.2)
    first = MemoryVersion.objects.get(memory_id=item.pk)
    memory_item_update(
        workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"content": "v2", "importance": 0.8}
    )
    restored = memory_item_restore(workspace=workspace, actor=AGENT, memory_id=item.pk, version_id=first.pk)
    assert (restored.content, restored.importance, restored.version) == ("v1", 0.2, 3)
    assert MemoryVersion.objects.get(memory_id=item.pk, version=3).operation == "modified"
    memory_item_delete(workspace=workspace, actor=AGENT, memory_id=item.pk)
    deleted_marker = MemoryVersion.objects.get(memory_id=item.pk, operation="deleted")
    with pytest.raises(ConflictError):
        memory_item_restore(workspace=workspace, actor=AGENT, memory_id=item.pk, version_id=deleted_marker.pk)


def test_batch_status_and_delete(workspace, other_workspace):
    items = [_fact(workspace, content=f"m{i}") for i in range(3)]
    foreign = _fact(other_workspace)
    ids = [items[0].pk, "mem_missing", items[1].pk, foreign.pk]
    result = memory_items_set_status(workspace=workspace, actor=AGENT, ids=ids, status="deprecated")
    assert result.counts == {"total": 4, "updated": 2, "not_found": 2, "status": "deprecated"}
    assert [r["result"] for r in result.results] == ["updated", "not_found", "updated", "not_found"]
    assert MemoryItem.objects.get(pk=items[0].pk).lifecycle_status == "deprecated"
    assert MemoryItem.objects.get(pk=foreign.pk).status == "active"
    again = memory_items_set_status(workspace=workspace, actor=AGENT, ids=[items[0].pk], status="deprecated")
    assert again.results[0]["changed"] is False
    assert MemoryVersion.objects.filter(memory_id=items[0].pk).count() == 2
    deleted = memory_items_delete(workspace=workspace, actor=AGENT, ids=[items[0].pk, items[2].pk, "mem_x"])
    assert deleted.counts == {"total": 3, "deleted": 2, "not_found": 1}
    assert MemoryVersion.objects.filter(memory_id=items[2].pk, operation="deleted").count() == 1
    for bad in ([], ["a", "a"], [f"m{i}" for i in range(101)], "abc", [1]):
        with pytest.raises(ValidationError):
            memory_items_delete(workspace=workspace, actor=AGENT, ids=bad)


def test_mark_used_is_not_a_modification(workspace):
    item = _fact(workspace)
    assert memory_items_mark_used(workspace=workspace, ids=[item.pk]) == 1
    fresh = MemoryItem.objects.get(pk=item.pk)
    assert fresh.last_used_at is not None and fresh.version == 1 and fresh.updated_at == item.updated_at


def test_mark_used_stamps_to_the_minute(workspace):
    item = _fact(workspace)
    first = timezone.now()
    assert memory_items_mark_used(workspace=workspace, ids=[item.pk], at=first) == 1
    # Injected again within the minute: the row is left as it is.
    assert memory_items_mark_used(workspace=workspace, ids=[item.pk], at=first + timedelta(seconds=59)) == 0
    assert MemoryItem.objects.get(pk=item.pk).last_used_at == first
    later = first + timedelta(minutes=1)
    assert memory_items_mark_used(workspace=workspace, ids=[item.pk], at=later) == 1
    assert MemoryItem.objects.get(pk=item.pk).last_used_at == later
