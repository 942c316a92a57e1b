"""Every memory is searchable by meaning: each write path queues its
embedding, a reindex keeps the vectors of unchanged text and embeds the rest,
an imported copy gets vectors too, and the dashboard shows what has none.

These tests turn the real offline model on (the suite runs without it)."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.urls import reverse

from memories.models import MemoryItem
from memories.recall.embeddings import get_embedding_provider
from memories.recall.models import RecallEntry
from tests.factories import append_messages
from tests.memories.pipeline_helpers import eager_celery

pytestmark = pytest.mark.django_db


@pytest.fixture
def embeddings_on(settings):
    settings.EMBEDDING_PROVIDER = "offline"
    return get_embedding_provider().name


def _without_vector(workspace, model):
    return RecallEntry.objects.filter(workspace=workspace).exclude(embedding_model=model).count()


def test_rest_mcp_and_agent_tool_writes_get_vectors(api, workspace, embeddings_on,
                                                      django_capture_on_commit_callbacks):
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        created = api.post("/v1/memories", {"scope": "user", "scope_id": "u-ana", "type": "fact",
                                            "content": "Ana is allergic to penicillin"}, format="json")
        assert created.status_code == 201
        remembered = api.post("/v1/agent_tools/remember", {"input": {"content": "Ana likes jazz"}}, format="json")
        assert remembered.status_code == 200
        mcp = api.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                "params": {"name": "remember", "arguments": {"content": "Ana plays chess"}}},
                       format="json", HTTP_ACCEPT="application/json, text/event-stream")
        assert mcp.status_code == 200, mcp.content
    assert MemoryItem.objects.filter(workspace=workspace).count() == 3
    assert RecallEntry.objects.filter(workspace=workspace).count() == 3
    assert _without_vector(workspace, embeddings_on) == 0


def test_an_edit_gets_a_new_vector(api, workspace, embeddings_on, django_capture_on_commit_callbacks):
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        item = api.post("/v1/memories", {"scope": "global", "type": "fact", "content": "The office opens at nine"},
                        format="json").json()["data"]
    before = RecallEntry.objects.get(memory_id=item["id"]).embedding
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        api.patch(f"/v1/memories/{item['id']}", {"content": "The office opens at ten"}, format="json")
    after = RecallEntry.objects.get(memory_id=item["id"])
    assert after.embedding_model == embeddings_on and after.embedding != before


def _conversation(workspace, django_capture_on_commit_callbacks):
    messages = [{"role": "user", "content": f"Note {i}: the meeting room on floor {i} has a projector."}
                for i in range(6)]
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        append_messages(workspace, "notes", messages)


def test_recall_reindex_keeps_vectors_and_embeds_what_has_none(workspace, embeddings_on, capsys,
                                                               django_capture_on_commit_callbacks):
    _conversation(workspace, django_capture_on_commit_callbacks)
    total = RecallEntry.objects.filter(workspace=workspace).count()
    assert total >= 6 and _without_vector(workspace, embeddings_on) == 0
    vectors = {(e.memory_id, e.message_id, e.start_char): e.embedding
               for e in RecallEntry.objects.filter(workspace=workspace)}
    # One entry lost its vector (say, a model change): the reindex embeds it.
    lost = RecallEntry.objects.filter(workspace=workspace).first()
    RecallEntry.objects.filter(pk=lost.pk).update(embedding=None, embedding_model="")
    call_command("recall_reindex")
    out = capsys.readouterr()
    assert "embedded 1 entries; 0 still without a vector" in out.out
    assert "embed" in out.err  # the progress bar
    assert RecallEntry.objects.filter(workspace=workspace).count() == total
    assert _without_vector(workspace, embeddings_on) == 0
    kept = {(e.memory_id, e.message_id, e.start_char): e.embedding
            for e in RecallEntry.objects.filter(workspace=workspace)}
    assert kept.keys() == vectors.keys()
    assert sum(kept[key] == vectors[key] for key in kept) >= total - 1


def test_an_imported_copy_has_vectors_and_recalls(workspace, embeddings_on, tmp_path, capsys,
                                                  django_capture_on_commit_callbacks):
    _conversation(workspace, django_capture_on_commit_callbacks)
    target = tmp_path / "acme.jsonl"
    call_command("export_workspace", "acme", "--output", str(target))
    call_command("import_workspace", str(target), "--into", "acme-copy", "--no-progress")
    from accounts.models import Workspace
    from memories.recall.index import memory_scope_token, passage_scope_token

    copy = Workspace.objects.get(slug="acme-copy")
    entries = RecallEntry.objects.filter(workspace=copy)
    assert entries.count() == RecallEntry.objects.filter(workspace=workspace).count()
    assert _without_vector(copy, embeddings_on) == 0
    # The copy's entries are filed under the copy's own scopes.
    tokens = set(entries.values_list("scope_token", flat=True))
    from conversations.models import Conversation

    conversation = Conversation.objects.get(workspace=copy)
    assert passage_scope_token(conversation.pk) in tokens
    for item in MemoryItem.objects.filter(workspace=copy).exclude(scope="floor"):
        assert memory_scope_token(copy.pk, item.scope, item.scope_id) in tokens


def test_the_dashboard_shows_entries_without_a_vector(admin_client, workspace, settings, embeddings_on,
                                                      django_capture_on_commit_callbacks):
    _conversation(workspace, django_capture_on_commit_callbacks)
    RecallEntry.objects.filter(workspace=workspace).update(embedding=None, embedding_model="")
    missing = RecallEntry.objects.filter(workspace=workspace).count()
    page = admin_client.get(reverse("admin:memories_dashboard")).content.decode()
    assert "Recall entries without a vector" in page
    assert f'<div class="big job-failed-text">{missing}</div>' in page
    settings.EMBEDDING_PROVIDER = "none"
    page = admin_client.get(reverse("admin:memories_dashboard")).content.decode()
    assert "EMBEDDING_PROVIDER=none" in page
