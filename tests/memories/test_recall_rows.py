"""The memory rows recall reads without a query and for pinned memories: the
scopes read one by one and merged (`_first_by_importance`) answer exactly what
one ORM query over all the scopes answers."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.actors import Actor
from conversations.models import Branch, Conversation
from conversations.selectors.branches import branch_view
from conversations.services import message_append
from memories.models import LifecycleStatus, MemoryItem, MemoryType, Scope, Status
from memories.recall import candidates
from memories.recall.context import conversation_recall_scope, user_recall_scope
from memories.services.items import memory_item_create
from memories.services.scopes import branch_scope_id

pytestmark = pytest.mark.django_db


def _orm_rows(scope, limit, min_importance=None):
    rows = (MemoryItem.objects.filter(workspace_id=scope.workspace_id, status=Status.ACTIVE,
                                      lifecycle_status=LifecycleStatus.ACTIVE).filter(scope.memory_filter)
            .exclude(type=MemoryType.DOCUMENT))
    if min_importance is not None:
        rows = rows.filter(importance__gte=min_importance)
    return list(rows.order_by("-importance", "-created_at").values(*candidates._MEMORY_FIELDS)[:limit])


@pytest.fixture
def scattered(workspace, other_workspace):
    """Memories in every scope a conversation sees and in scopes it does not,
    with repeated importances (ties fall to the newer) and some that are not
    candidates (a document, a deprecated one, a pending one)."""
    actor = Actor.for_api_key("k")
    mine = message_append(workspace=workspace, external_id="c", role="user", content="hello", user_id="u1").message
    theirs = message_append(workspace=workspace, external_id="other", role="user", content="hi").message
    message_append(workspace=other_workspace, external_id="c", role="user", content="hello")
    rng = random.Random(5)
    places = [(Scope.GLOBAL, ""), (Scope.GLOBAL, "team"), (Scope.USER, "u1"), (Scope.USER, "u2"), (Scope.CHAT, "c"),
              (Scope.CHAT, "other"), (Scope.BRANCH, branch_scope_id("c", "main")),
              (Scope.BRANCH, branch_scope_id("other", "main")), (Scope.FLOOR, mine.pk), (Scope.FLOOR, theirs.pk)]
    base = timezone.now() - timedelta(days=30)
    for n in range(160):
        scope, scope_id = places[n % len(places)]
        item = memory_item_create(workspace=workspace, actor=actor, scope=scope, scope_id=scope_id, type="fact",
                                  content=f"fact number {n}", importance=rng.choice([0.3, 0.5, 0.9, 0.95, 1.0]))
        MemoryItem.objects.filter(pk=item.pk).update(created_at=base + timedelta(minutes=rng.randrange(10_000)))
    kept_out = MemoryItem.objects.filter(workspace=workspace, importance__gte=0.9).order_by("pk")[:3]
    MemoryItem.objects.filter(pk=kept_out[0].pk).update(type=MemoryType.DOCUMENT)
    MemoryItem.objects.filter(pk=kept_out[1].pk).update(status=Status.DEPRECATED)
    MemoryItem.objects.filter(pk=kept_out[2].pk).update(lifecycle_status=LifecycleStatus.PENDING)
    for n in range(5):  # another workspace's: never read
        memory_item_create(workspace=other_workspace, actor=actor, scope=Scope.GLOBAL, type="fact",
                           content=f"elsewhere {n}", importance=1.0)
    return workspace


@pytest.mark.parametrize("branch_scope", [None, branch_scope_id("c", "main")])
@pytest.mark.parametrize(("limit", "min_importance"), [(300, None), (50, 0.9), (7, None), (7, 0.9), (1, 0.95)])
def test_a_conversations_rows_match_one_query_over_its_scopes(scattered, branch_scope, limit, min_importance):
    conversation = Conversation.objects.get(workspace=scattered, external_id="c")
    view = branch_view(branch=Branch.objects.get(conversation=conversation, name="main"))
    scope = conversation_recall_scope(conversation=conversation, view=view, branch_scope=branch_scope)
    expected = _orm_rows(scope, limit, min_importance)
    got = candidates._first_by_importance(scope, limit, min_importance=min_importance)
    # Ties on (importance, created_at) may come in either order; none here.
    assert [row["id"] for row in got] == [row["id"] for row in expected]
    assert got == expected  # every value as the ORM converts it
    assert expected and len(got) == min(limit, len(_orm_rows(scope, 10_000, min_importance)))


def test_rows_outside_a_conversation_are_global_and_the_users(scattered):
    for user_id in (None, "u1"):
        scope = user_recall_scope(workspace=scattered, user_id=user_id)
        got = candidates._first_by_importance(scope, 300)
        assert got == _orm_rows(scope, 300)
        assert {row["scope"] for row in got} == ({Scope.GLOBAL} if user_id is None else {Scope.GLOBAL, Scope.USER})
