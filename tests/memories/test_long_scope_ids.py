"""The longest conversation id with the longest branch name, escapes included,
still makes a branch scope id the pipeline can store and extract (on
PostgreSQL a too-long value is refused, and the branch was never extracted)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from conversations.models import MAX_CONVERSATION_ID_BYTES
from conversations.services import MAX_BRANCH_NAME_CHARS, branch_create
from memories.models import MAX_SCOPE_ID_CHARS, MemoryItem, MemoryJob, ScopeState
from memories.services.scopes import branch_scope_id
from tests.factories import append_messages
from tests.memories.pipeline_helpers import eager_celery, load_fixture

pytestmark = pytest.mark.django_db
# Every `"` and `\` doubles in JSON: the worst case for a given length.
CONVERSATION_ID = '"\\' * (MAX_CONVERSATION_ID_BYTES // 2)
BRANCH = "分" + '"' * (MAX_BRANCH_NAME_CHARS - 1)


def test_the_worst_case_branch_scope_id_fits():
    scope_id = branch_scope_id(CONVERSATION_ID, BRANCH)
    assert len(CONVERSATION_ID.encode()) == MAX_CONVERSATION_ID_BYTES and len(BRANCH) == MAX_BRANCH_NAME_CHARS
    assert 600 < len(scope_id) <= MAX_SCOPE_ID_CHARS


def test_a_branch_with_the_longest_ids_is_extracted(workspace, django_capture_on_commit_callbacks):
    messages = load_fixture("en_travel_planning")["messages"]
    with eager_celery(), override_settings(MEMORY_EXTRACT_MIN_FLOORS=4, MEMORY_EXTRACT_BATCH_FLOORS=8), \
            django_capture_on_commit_callbacks(execute=True):
        first = append_messages(workspace, CONVERSATION_ID, messages[:2])
        branch_create(workspace=workspace, external_id=CONVERSATION_ID, name=BRANCH, from_message_id=first[-1].pk)
        append_messages(workspace, CONVERSATION_ID, messages[2:12], branch=BRANCH)
    scope_id = branch_scope_id(CONVERSATION_ID, BRANCH)
    assert ScopeState.objects.filter(workspace=workspace, scope="branch", scope_id=scope_id).exists()
    assert MemoryJob.objects.filter(workspace=workspace, scope_id=scope_id, status="succeeded").exists()
    assert MemoryItem.objects.filter(workspace=workspace, scope="branch", scope_id=scope_id, type="summary").exists()
