"""`POST /v1/conversations/{cid}/context`: spec 002's assembly plus memory selection."""

from __future__ import annotations

import pytest
from django.test import override_settings

from accounts.actors import Actor
from conversations.models import Message
from memories.llm.tokens import count_tokens
from memories.models import MemoryItem
from memories.services.scopes import branch_scope_id
from tests.factories import MemoryItemFactory, append_messages
from tests.memories.pipeline_helpers import eager_celery, load_fixture

pytestmark = pytest.mark.django_db


def _url(cid: str) -> str:
    return f"/v1/conversations/{cid}/context"


def _conversation(workspace, cid="c1", n=14):
    msgs = [{"role": "system", "content": "Be brief."}]
    msgs += [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "x" * 40} for i in range(n)]
    return append_messages(workspace, cid, msgs)


def _mem(workspace, content, *, scope="branch", scope_id=None, **extra):
    """A memory of the conversation `c1`'s main branch unless the scope says otherwise."""
    scope_id = branch_scope_id("c1", "main") if scope_id is None and scope == "branch" else (scope_id or "")
    return MemoryItemFactory(workspace=workspace, actor=Actor.for_api_key("k"), scope=scope, scope_id=scope_id,
                             content=content, **extra)


def test_last_n_messages_system_first_truncated_copies_and_temporary(api, workspace):
    _conversation(workspace)
    body = {"max_messages": 4, "truncate_chars": 12, "system": "You are helpful.",
            "temporary_messages": [{"role": "tool", "content": "tool output"}], "include_memories": False}
    response = api.post(_url("c1"), body, format="json")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    messages = data["messages"]
    assert messages[0]["role"] == "system" and messages[0]["content"].startswith("You are helpful.")
    history = messages[1:-1]
    assert [m["content"] for m in history] == [(f"message {i} " + "x" * 40)[:12] + "…" for i in range(10, 14)]
    assert messages[-1] == {"role": "tool", "content": "tool output", "metadata": {}}
    # Stored messages are untouched and the temporary one was never stored.
    assert sum(1 for m in Message.objects.all() if isinstance(m.content, str) and m.content.endswith("x" * 40)) == 14
    assert Message.objects.count() == 15


def test_stored_system_messages_do_not_count_and_come_first(api, workspace):
    append_messages(workspace, "c1", [{"role": "user", "content": "one"}, {"role": "system", "content": "Rule A"},
                                 {"role": "user", "content": "two"}, {"role": "assistant", "content": "three"}])
    data = api.post(_url("c1"), {"max_messages": 2, "format": "anthropic", "include_memories": False},
                    format="json").json()["data"]
    assert data["system"] == "Rule A"
    assert data["messages"] == [{"role": "user", "content": "two"}, {"role": "assistant", "content": "three"}]


def test_history_reads_only_the_messages_it_may_keep(api, workspace):
    from django.db import connection

    append_messages(workspace, "c1", [{"role": "user", "content": f"old {n}"} for n in range(30)] + [
        {"role": "assistant", "content": "a1"}, {"role": "system", "content": "Rule B"},
        {"role": "user", "content": "u2"}, {"role": "assistant", "content": "a2"}])
    statements = []

    def record(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        data = api.post(_url("c1"), {"max_messages": 3, "format": "anthropic", "include_memories": False},
                        format="json").json()["data"]
    # The system message inside the window takes no place in it: a second page reads the one still missing.
    assert data["system"] == "Rule B"
    assert [m["content"] for m in data["messages"]] == ["a1", "u2", "a2"]
    # The pages' keyset reads, their LIMIT the statement's last value.
    pages = [params for sql, params in statements
             if 'FROM "conversations_message"' in sql and "ORDER BY" in sql and "system" not in params]
    assert [page[-1] for page in pages] == [3, 1], statements


def test_openai_format_puts_system_message_first(api, workspace):
    _conversation(workspace, n=3)
    data = api.post(_url("c1"), {"format": "openai", "system": "S"}, format="json").json()["data"]
    assert data["messages"][0] == {"role": "system", "content": "S\n\nBe brief."}
    assert [m["role"] for m in data["messages"][1:]] == ["user", "assistant", "user"]


def test_memories_answering_the_query_come_first_and_budget_is_explained(api, workspace):
    _conversation(workspace, n=2)
    cooking = _mem(workspace, "User is allergic to peanuts", importance=0.3)
    _mem(workspace, "User's favourite football team is Arsenal", importance=0.9)
    _mem(workspace, "User works at a bakery in Leeds", importance=0.8)
    pending = _mem(workspace, "User is allergic to shellfish", importance=1.0, lifecycle_status="pending")
    _mem(workspace, "A global note about peanuts allergy policy", scope="global", importance=0.2)
    other_branch = _mem(workspace, "peanuts allergic elsewhere", scope_id=branch_scope_id("c1", "other"))

    body = {"branch": "main", "query": "is the user allergic to peanuts?", "strategy": "importance",
            "memory_token_budget": 20}
    data = api.post(_url("c1"), body, format="json").json()["data"]
    memory = data["memory"]
    ids = [m["id"] for m in memory["injected"]]
    assert ids[0] == cooking.pk
    assert pending.pk not in ids and other_branch.pk not in ids
    first = memory["injected"][0]
    assert set(first["score"]) >= {"importance", "recency", "confidence", "relevance", "total"}
    assert first["tokens"] > 0
    # The budget holds for the section as rendered, header and labels included.
    section = data["system"][data["system"].index("## Relevant memories"):].split("\n\n")[0]
    assert memory["tokens_used"] == count_tokens(section) <= 20
    assert memory["omitted_count"] == len(memory["omitted"]) > 0
    assert "allergic to peanuts" in data["system"]
    assert data["usage"]["total_tokens"] >= data["usage"]["system_tokens"] > 0
    # What was injected is stamped; what was left out is not.
    assert MemoryItem.objects.get(pk=cooking.pk).last_used_at is not None
    assert MemoryItem.objects.get(pk=memory["omitted"][0]["id"]).last_used_at is None
    # No version is written for a use.
    assert MemoryItem.objects.get(pk=cooking.pk).version == 1


def test_a_use_stamped_within_the_minute_sends_no_update(api, workspace):
    from datetime import timedelta

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    _conversation(workspace)
    pinned = _mem(workspace, "The user's name is Ada", importance=0.95)
    body = {"branch": "main", "query": "anything new?"}
    api.post(_url("c1"), body, format="json")
    stamped = MemoryItem.objects.get(pk=pinned.pk).last_used_at
    assert stamped is not None
    with CaptureQueriesContext(connection) as queries:
        data = api.post(_url("c1"), body, format="json").json()["data"]
    assert pinned.pk in [m["id"] for m in data["memory"]["injected"]]
    assert not [q for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
    assert MemoryItem.objects.get(pk=pinned.pk).last_used_at == stamped
    # A stamp older than the resolution is renewed.
    MemoryItem.objects.filter(pk=pinned.pk).update(last_used_at=stamped - timedelta(minutes=2))
    api.post(_url("c1"), body, format="json")
    assert MemoryItem.objects.get(pk=pinned.pk).last_used_at > stamped


def test_without_branch_reads_chat_scope_and_the_main_line(api, workspace):
    _conversation(workspace, n=2)
    main_item = _mem(workspace, "main branch memory about tea")
    fork_item = _mem(workspace, "fork memory about tea", scope_id=branch_scope_id("c1", "retry"))
    chat_item = _mem(workspace, "chat memory about tea", scope="chat", scope_id="c1")
    data = api.post(_url("c1"), {"query": "tea"}, format="json").json()["data"]
    ids = {m["id"] for m in data["memory"]["injected"]}
    assert chat_item.pk in ids and main_item.pk in ids and fork_item.pk not in ids
    assert data["memory"]["scopes"] == ["global", "chat", "floor", "branch:main", "passages"]
    # Naming a branch reads that branch only: no chat-scope memories.
    named = api.post(_url("c1"), {"query": "tea", "branch": "main"}, format="json").json()["data"]
    named_ids = {m["id"] for m in named["memory"]["injected"]}
    assert main_item.pk in named_ids and chat_item.pk not in named_ids


def test_dual_summary_puts_latest_macro_then_later_micros_first(api, workspace):
    _conversation(workspace, n=2)
    _mem(workspace, "old micro", type="summary", summary_tier="micro", lifecycle_status="compacted",
         coverage_start_floor_no=1, coverage_end_floor_no=10)
    macro = _mem(workspace, "macro summary", type="summary", summary_tier="macro",
                 coverage_start_floor_no=1, coverage_end_floor_no=10, importance=0.1)
    later = _mem(workspace, "later micro", type="summary", summary_tier="micro",
                 coverage_start_floor_no=11, coverage_end_floor_no=20, importance=0.1)
    fact = _mem(workspace, "User likes tea", importance=1.0)
    data = api.post(_url("c1"), {"branch": "main", "strategy": "dual-summary", "query": ""}, format="json").json()["data"]
    assert [m["id"] for m in data["memory"]["injected"]] == [macro.pk, later.pk, fact.pk]


def test_rolling_summary_and_attached_store_instructions_are_included(api, workspace, django_capture_on_commit_callbacks):
    from memories.services.stores import memory_store_create

    store = memory_store_create(workspace=workspace, name="Recipes", description="Family recipes")
    fixture = load_fixture("en_travel_planning")
    with eager_celery(), override_settings(MEMORY_EXTRACT_MIN_FLOORS=5), \
            django_capture_on_commit_callbacks(execute=True):
        append_messages(workspace, "trip", fixture["messages"])
    put = api.put("/v1/conversations/trip/resources",
                  {"resources": [{"type": "memory_store", "memory_store_id": store.pk, "access": "read_only", "instructions": "Cite recipes."}]},
                  format="json")
    assert put.status_code == 200, put.content
    data = api.post(_url("trip"), {"branch": "main", "query": "Where does the user live now?"}, format="json").json()["data"]
    # Portland is said once: by the fact injected beside the summary, which
    # leaves out the summary's clauses the memories already say.
    assert "Portland" in data["system"]
    assert "Portland" not in (data["summary"] or "")
    assert "Recipes" in data["system"] and "Cite recipes." in data["system"] and "Family recipes" in data["system"]
    injected = data["memory"]["injected"]
    assert any("Portland" in m["content"] for m in injected[:3])
    assert not any("Seattle" in m["content"] and m.get("type") == "fact" for m in injected)  # deprecated: never injected


def test_read_only_key_may_assemble(readonly_api, workspace):
    _conversation(workspace, n=2)
    assert readonly_api.post(_url("c1"), {}, format="json").status_code == 200


@pytest.mark.parametrize("body", [{"strategy": "nope"}, {"max_messages": -1}, {"format": "xml"},
                                  {"temporary_messages": [{"role": "bot", "content": "x"}]}, {"unknown": 1},
                                  {"memory_token_budget": "lots"}])
def test_bad_input_is_400(api, workspace, body):
    _conversation(workspace, n=2)
    response = api.post(_url("c1"), body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_unknown_conversation_or_branch_is_404(api, other_api, workspace):
    _conversation(workspace, n=2)
    assert api.post(_url("nope"), {}, format="json").status_code == 404
    assert api.post(_url("c1"), {"branch": "ghost"}, format="json").status_code == 404
    assert other_api.post(_url("c1"), {}, format="json").status_code == 404


def test_a_message_is_found_right_after_its_append_with_no_job_run(api, workspace, django_capture_on_commit_callbacks):
    """The last floors of a conversation are below every extraction
    threshold: no job reads them, yet the append put their passages in the
    recall index as it committed."""
    from memories.models import MemoryJob
    from memories.recall.models import RecallEntry

    turns = [("user", "Did you see the game last night?"), ("assistant", "I did, what a finish."),
             ("user", "My cousin John adopted a dog last week."), ("assistant", "How lovely! What is the dog's name?"),
             ("user", "Their name is Luna."), ("assistant", "Luna is a sweet name."),
             ("user", "Anyway, back to planning the weekend."), ("assistant", "Sure, what do you have in mind?")]
    with override_settings(MEMORY_EXTRACT_MIN_FLOORS=1000, MEMORY_EXTRACT_MIN_TOKENS=1_000_000), \
            django_capture_on_commit_callbacks(execute=True):
        for role, content in turns:
            response = api.post("/v1/conversations/fresh/messages", {"role": role, "content": content}, format="json")
            assert response.status_code == 201, response.content
    assert not MemoryJob.objects.exists()
    luna = Message.objects.get(content="Their name is Luna.")
    assert RecallEntry.objects.filter(message_id=luna.pk).exists()
    data = api.post(_url("fresh"), {"query": "What is the name of the dog? Luna?", "max_messages": 2},
                    format="json").json()["data"]
    injected = data["memory"]["injected"]
    assert luna.pk in {entry.get("source_message_id") for entry in injected}, injected
    assert "Their name is Luna." in data["system"]
