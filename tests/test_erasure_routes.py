"""Every way in that deletes or redacts goes through the erasure REST uses:
the MCP `forget` tool, the admin's version redaction, the store tools of an
agent, LangGraph's store, store TTL expiry, Claude session subpaths and
LangGraph checkpoint pruning. Each test plants a secret, erases it by its
route and scans every table (and, where the route erases for good, the
database files, Redis and the export) for it."""

from __future__ import annotations

import base64
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import ApiKey
from agent_tools.mcp.tools import agent_tool_execute
from agent_tools.store_tools import memory_tool_execute
from memories.models import JobKind, MemoryItem, MemoryStore, MemoryVersion
from memories.services.items import memory_item_update
from memories.services.jobs import memory_job_enqueue
from memories.services.pipeline.maintenance import items_sweep_expired
from tests.admin.helpers import run_action
from tests.factories import MemoryItemFactory
from tests.memories.pipeline_helpers import eager_celery
from tests.memories.test_lineage import tables_holding
from tests.test_planted_secrets import scan

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "qzv77routesecret55121x"


def _compacted(workspace, secret: str) -> tuple[MemoryItem, MemoryItem]:
    """Two micro summaries of a chat scope, one holding `secret`, compacted
    into a macro: (the micro with the secret, the macro)."""
    micro = MemoryItemFactory(workspace=workspace, scope="chat", scope_id="c-routes", type="summary",
                              summary_tier="micro", content=f"The user gave the door code {secret}.")
    MemoryItemFactory(workspace=workspace, scope="chat", scope_id="c-routes", type="summary",
                      summary_tier="micro", content="The user asked about the weather.")
    with eager_celery():
        memory_job_enqueue(workspace=workspace, kind=JobKind.COMPACT, scope="chat", scope_id="c-routes",
                           payload={"force": True})
    macro = MemoryItem.objects.get(workspace=workspace, summary_tier="macro")
    assert secret in macro.content
    return micro, macro


def _history_only(memory_id: str, secret: str) -> None:
    """The secret is left only in the deleted memory's own earlier versions
    (a delete keeps them until they are redacted, as the REST delete does)."""
    assert tables_holding(secret) <= {"memories_memoryversion"}
    holders = {v.memory_id for v in MemoryVersion.objects.all() if secret in (v.content or "")}
    assert holders <= {memory_id}


def test_mcp_forget_erases_what_was_compacted_from_the_memory(workspace, api_key):
    micro, macro = _compacted(workspace, SECRET)
    key = ApiKey.objects.filter(workspace=workspace).first()
    result = agent_tool_execute(workspace=workspace, api_key=key, name="forget",
                                arguments={"memory_id": micro.pk, "mode": "delete"}, actor=Actor.for_api_key(key.pk))
    assert result.error is None, result.content
    assert not MemoryItem.objects.filter(pk__in=[micro.pk, macro.pk]).exists()
    _history_only(micro.pk, SECRET)


def test_admin_version_redaction_erases_what_was_compacted_from_the_memory(workspace, admin_client):
    micro, macro = _compacted(workspace, SECRET)
    memory_item_update(workspace=workspace, actor=Actor.system(), memory_id=micro.pk,
                       changes={"content": "The user gave a door code."})
    micro.refresh_from_db()
    assert SECRET not in micro.content
    old = list(MemoryVersion.objects.filter(memory_id=micro.pk, content__contains=SECRET))
    assert old
    response = run_action(admin_client, "/admin/memories/memoryversion/", "redact_selected", [v.pk for v in old],
                          confirm=True)
    assert response.status_code == 200
    assert not MemoryVersion.objects.filter(pk__in=[v.pk for v in old], redacted_at__isnull=True).exists()
    # The macro compacted from the micro quoted the redacted text: erased too.
    assert not MemoryItem.objects.filter(pk=macro.pk).exists()
    assert scan(workspace, [SECRET]) == {}


def _store(api) -> MemoryStore:
    store = api.post("/v1/memory_stores", {"name": "routes"}, format="json").json()
    return MemoryStore.objects.get(pk=store["id"])


def test_a_store_document_deleted_by_an_agent_tool_then_redacted_is_gone_everywhere(api, workspace):
    store = _store(api)
    written = api.post(f"/v1/memory_stores/{store.pk}/memories",
                       {"path": "/notes/door.md", "content": f"door code {SECRET}"}, format="json")
    assert written.status_code in (200, 201), written.content
    memory_id = written.json()["id"]
    result = memory_tool_execute(store=store, name="memory_delete", tool_input={"path": "/notes/door.md"},
                                 actor=Actor.system(), can_write=True)
    assert result.output["id"] == memory_id
    _history_only(memory_id, SECRET)
    for version in MemoryVersion.objects.filter(memory_id=memory_id, content__contains=SECRET):
        response = api.post(f"/v1/memory_stores/{store.pk}/memory_versions/{version.pk}/redact", format="json")
        assert response.status_code == 200, response.content
    assert scan(workspace, [SECRET]) == {}


def test_a_langgraph_store_value_deleted_then_redacted_is_gone_everywhere(api, workspace):
    def batch(value):
        response = api.post("/v1/langgraph_store/batch", {"ops": [
            {"op": "put", "namespace": ["notes"], "key": "k1", "value": value}]}, format="json")
        assert response.status_code in (200, 201), response.content

    batch({"text": SECRET})
    item = MemoryItem.objects.get(workspace=workspace, content__contains=SECRET)
    batch(None)
    _history_only(item.pk, SECRET)
    for version in MemoryVersion.objects.filter(memory_id=item.pk, content__contains=SECRET):
        response = api.post(f"/v1/memory_stores/{item.store_id}/memory_versions/{version.pk}/redact", format="json")
        assert response.status_code == 200, response.content
    assert scan(workspace, [SECRET]) == {}


def test_an_expired_store_value_is_gone_everywhere(api, workspace):
    response = api.post("/v1/langgraph_store/batch", {"ops": [
        {"op": "put", "namespace": ["notes"], "key": "k2", "value": {"text": SECRET}, "ttl": 1}]}, format="json")
    assert response.status_code in (200, 201), response.content
    MemoryItem.objects.filter(content__contains=SECRET).update(expires_at=timezone.now() - timedelta(minutes=1))
    assert items_sweep_expired() == 1
    assert scan(workspace, [SECRET]) == {}


def test_a_claude_session_subpath_deleted_is_gone_everywhere(api, workspace):
    entry = {"type": "user", "uuid": "u1", "message": {"role": "user", "content": SECRET}}
    key = {"project_key": "p", "session_id": "s", "subpath": "agent-1"}
    assert api.post("/v1/claude_sessions/append", {**key, "entries": [entry]}, format="json").status_code in (200, 201)
    assert tables_holding(SECRET)
    response = api.post("/v1/claude_sessions/delete", key, format="json")
    assert response.status_code in (200, 204), response.content
    assert scan(workspace, [SECRET]) == {}


def test_pruned_langgraph_checkpoints_are_gone_everywhere(api, workspace):
    for n, text in enumerate([SECRET, "later state"], start=1):
        blob = base64.b64encode(json.dumps({"messages": [text]}).encode()).decode()
        response = api.post("/v1/langgraph_checkpoints", {"thread_id": "lg-r", "checkpoint_id": f"000{n}",
                                                          "type": "json", "checkpoint": blob, "metadata": {"step": n}},
                            format="json")
        assert response.status_code in (200, 201), response.content
    secret_blob = base64.b64encode(json.dumps({"messages": [SECRET]}).encode()).decode()
    response = api.post("/v1/langgraph_checkpoints/prune", {"thread_ids": ["lg-r"], "strategy": "keep_latest"},
                        format="json")
    assert response.status_code == 200, response.content
    assert scan(workspace, [SECRET, secret_blob]) == {}


def test_detached_resource_instructions_are_gone_everywhere(api, workspace):
    store = _store(api)
    attach = {"type": "memory_store", "memory_store_id": store.pk, "access": "read_only", "instructions": SECRET}
    assert api.put("/v1/conversations/c-res/resources", {"resources": [attach]}, format="json").status_code == 200
    assert tables_holding(SECRET)
    assert api.put("/v1/conversations/c-res/resources", {"resources": []}, format="json").status_code == 200
    assert scan(workspace, [SECRET]) == {}
