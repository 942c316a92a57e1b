"""Erasure that follows lineage: a secret said in a message reaches a fact, a
micro summary, a macro summary (compaction), the rolling summary, the recall
passages and an export. Each way of taking it back (redacting it everywhere,
editing or deleting the message, clearing or deleting the conversation,
expiry) leaves it nowhere: not in any column of any table (FTS shadow tables
included; on SQLite not in the database file either), not in `/context`, not
in `export_workspace`. What remains is derived again."""

from __future__ import annotations

import html
import io
import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.db.models import Q
from django.test import override_settings
from django.utils import timezone

from accounts.actors import Actor
from accounts.backup import workspace_export
from conversations.models import Conversation, Message
from conversations.services import message_append
from memories.models import JobKind, MemoryItem, MemoryJob, MemoryType, MemoryVersion, Scope, ScopeState, SummaryTier
from memories.recall.models import RecallEntry
from memories.services.lineage.erase import LineageReport
from memories.services.lineage.find import memory_descendants
from memories.services.lineage.text import workspace_text_occurrences, workspace_text_redact
from memories.services.pipeline.maintenance import conversations_expire
from memories.services.scopes import branch_scope_id
from tests.memories.pipeline_helpers import eager_celery

pytestmark = pytest.mark.django_db(transaction=True)

CID = "trip-1"
USER = "u-lineage"
SECRETS = {
    "ascii": "whale8842.orion@example.com",
    "zh": "鲸鱼座八八四二@例子.中国",
}
# Fragments that must not survive either (the recall index keeps analysed
# terms, Chinese as bigrams).
FRAGMENTS = {"ascii": ["whale8842"], "zh": ["鲸鱼座", "鲸鱼"]}
DIALOGS = {
    "ascii": [
        ("user", "Hi, I'm planning a trip to Lisbon in May with my sister."),
        ("assistant", "Lovely! How many days will you stay in Lisbon?"),
        ("user", "My email is whale8842.orion@example.com, send the hotel confirmation there."),
        ("assistant", "Noted, the booking confirmation will go to that address."),
        ("user", "We also want to visit Porto for two days."),
        ("assistant", "Porto is a great idea; the train takes three hours."),
        ("user", "We fly back home on the twentieth."),
        ("assistant", "Great, I'll look for flights on the twentieth."),
    ],
    "zh": [
        ("user", "你好，我下个月要去杭州出差三天。"),
        ("assistant", "好的，需要我帮你安排酒店吗？"),
        ("user", "我的邮箱是鲸鱼座八八四二@例子.中国，请把确认信发到这里。"),
        ("assistant", "收到，确认信会发到这个地址。"),
        ("user", "另外我想在西湖边吃一顿晚饭。"),
        ("assistant", "可以，我推荐楼外楼。"),
        ("user", "周五晚上我要回上海。"),
        ("assistant", "好的，我会订周五晚上的高铁。"),
    ],
}
SECRET_FLOOR = 3
QUERIES = {"ascii": ["email", "hotel confirmation address"], "zh": ["邮箱", "确认信发到哪里"]}
PIPELINE = {"MEMORY_EXTRACT_MIN_FLOORS": 4, "MEMORY_EXTRACT_BATCH_FLOORS": 4, "MEMORY_COMPACT_MIN_MICROS": 2}


# --- where the text could be ---------------------------------------------------------


def _needles(text: str) -> tuple[str, bytes, str]:
    # SQLite stores JSON with non-ASCII characters escaped.
    return text, text.encode("utf-8"), json.dumps(text)[1:-1]


def tables_holding(text: str) -> set[str]:
    """Every table (FTS shadow tables included) with a value holding `text`,
    as text, JSON (escaped or not) or bytes."""
    plain, raw, escaped = _needles(text)
    found: set[str] = set()
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            if connection.vendor == "sqlite" and table.endswith("_fts"):
                continue  # the virtual table: its storage is the shadow tables
            cursor.execute(f"SELECT * FROM {quote(table)}")
            for row in cursor.fetchall():
                for value in row:
                    if isinstance(value, (dict, list)):
                        value = json.dumps(value, ensure_ascii=False)
                    if isinstance(value, memoryview):
                        value = value.tobytes()
                    holds_text = isinstance(value, str) and (plain in value or escaped in value)
                    holds_bytes = isinstance(value, bytes) and (raw in value or escaped.encode() in value)
                    if holds_text or holds_bytes:
                        found.add(table)
    return found


def database_file_holds(text: str) -> bool:
    """SQLite: do the bytes of the database file (after a checkpoint of its
    write-ahead log) or of the log itself hold the text?"""
    _, raw, escaped = _needles(text)
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    path = Path(connection.settings_dict["NAME"])
    for candidate in (path, Path(f"{path}-wal")):
        if candidate.exists():
            data = candidate.read_bytes()
            if raw in data or escaped.encode() in data:
                return True
    return False


def export_text(workspace) -> str:
    out = io.StringIO()
    workspace_export(workspace_ref=str(workspace.pk), out=out)
    return out.getvalue()


def context_text(api, query: str, cid: str = CID) -> str:
    response = api.post(f"/v1/conversations/{cid}/context", {"query": query}, format="json")
    assert response.status_code == 200, response.content
    return json.dumps(response.json(), ensure_ascii=False)


def assert_gone(api, workspace, case: str, *, cid: str = CID) -> None:
    secret = SECRETS[case]
    assert tables_holding(secret) == set()
    for fragment in FRAGMENTS[case]:
        assert tables_holding(fragment) == set(), fragment
    if connection.vendor == "sqlite":
        assert not database_file_holds(secret)
        for fragment in FRAGMENTS[case]:
            assert not database_file_holds(fragment), fragment
    for query in QUERIES[case]:
        assert secret not in context_text(api, query, cid)
    exported = export_text(workspace)
    assert secret not in exported and json.dumps(secret)[1:-1] not in exported


# --- the secret flows everywhere ----------------------------------------------------------


def _dialog_appended(workspace, case: str) -> list[Message]:
    with eager_celery(), override_settings(**PIPELINE):
        return [
            message_append(workspace=workspace, external_id=CID, role=role, content=content, user_id=USER).message
            for role, content in DIALOGS[case]
        ]


@pytest.fixture(params=sorted(SECRETS))
def case(request) -> str:
    return request.param


@pytest.fixture
def flowed(api, workspace, case):
    """The conversation after extraction and compaction, with the secret in
    every derived place (checked here, so each test starts from a real leak)."""
    messages = _dialog_appended(workspace, case)
    secret = SECRETS[case]
    items = MemoryItem.objects.filter(workspace=workspace, content__contains=secret)
    fact = items.get(type=MemoryType.FACT, scope=Scope.USER, scope_id=USER)
    assert fact.sources == [messages[SECRET_FLOOR - 1].pk]
    micro = items.get(type=MemoryType.SUMMARY, summary_tier=SummaryTier.MICRO)
    assert micro.coverage_start_floor_no == 1 and messages[SECRET_FLOOR - 1].pk in micro.sources
    macro = items.get(type=MemoryType.SUMMARY, summary_tier=SummaryTier.MACRO)
    assert micro.pk in macro.source_memory_ids
    state = ScopeState.objects.get(workspace=workspace, scope=Scope.BRANCH, scope_id=branch_scope_id(CID, "main"))
    assert secret in state.rolling_summary and messages[SECRET_FLOOR - 1].pk in state.rolling_sources
    assert secret in Conversation.objects.get(workspace=workspace, external_id=CID).metadata["summary"]
    assert RecallEntry.objects.filter(message_id=messages[SECRET_FLOOR - 1].pk, terms__contains=FRAGMENTS[case][-1]
                                      ).exists()
    assert secret in export_text(workspace)
    assert all(secret in context_text(api, query) for query in QUERIES[case])
    assert {"memories_memoryitem", "memories_memoryversion", "memories_scopestate",
            "conversations_conversation", "conversations_message"} <= tables_holding(secret)
    return messages, {fact.pk, micro.pk, macro.pk}


def _assert_lineage(lineage: dict, derived: set[str]) -> None:
    assert set(lineage) == {"memories_deleted", "memory_ids", "summaries_cleared", "rederive_job_ids"}
    assert derived <= set(lineage["memory_ids"])
    assert lineage["memories_deleted"] == len(lineage["memory_ids"])
    assert lineage["summaries_cleared"] >= 1


def _assert_derived_again(workspace, case: str) -> None:
    """What remains was extracted again: summaries of the branch and a rolling
    summary, none of them holding the secret, written by the re-derive job."""
    scope_id = branch_scope_id(CID, "main")
    job = MemoryJob.objects.get(workspace=workspace, kind=JobKind.REBUILD, scope_id=scope_id)
    assert job.status == "succeeded" and job.payload["from_floor_no"] == 1
    micros = MemoryItem.objects.filter(workspace=workspace, scope=Scope.BRANCH, scope_id=scope_id,
                                       summary_tier=SummaryTier.MICRO)
    assert micros.exists() and micros.filter(source_job=job).exists()
    state = ScopeState.objects.get(workspace=workspace, scope=Scope.BRANCH, scope_id=scope_id)
    assert state.rolling_summary and SECRETS[case] not in state.rolling_summary
    assert state.last_processed_floor_no == len(DIALOGS[case])


# --- each way of taking it back ----------------------------------------------------------


def test_edit_erases_what_was_derived_and_derives_again(api, workspace, case, flowed):
    messages, derived = flowed
    secret_message = messages[SECRET_FLOOR - 1]
    new_text = secret_message.content.replace(SECRETS[case], "(withdrawn)")
    with eager_celery(), override_settings(**PIPELINE):
        response = api.patch(f"/v1/conversations/{CID}/messages/{secret_message.pk}", {"content": new_text},
                             format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["data"]["content"] == new_text
    _assert_lineage(body["lineage"], derived)
    assert len(body["lineage"]["rederive_job_ids"]) == 1
    # Each deletion is a version by the API key that edited the message, and
    # every version of an erased memory is redacted.
    deleted = MemoryVersion.objects.filter(memory_id__in=body["lineage"]["memory_ids"], operation="deleted")
    assert deleted.count() == body["lineage"]["memories_deleted"]
    assert set(deleted.values_list("actor_type", flat=True)) == {"api_key"}
    assert not MemoryVersion.objects.filter(memory_id__in=body["lineage"]["memory_ids"],
                                            redacted_at__isnull=True).exists()
    assert not MemoryItem.objects.filter(pk__in=body["lineage"]["memory_ids"]).exists()
    # The edited message's passages are indexed again, from its new text.
    assert RecallEntry.objects.filter(message_id=secret_message.pk, terms__contains="withdrawn").exists() or (
        case == "zh" and RecallEntry.objects.filter(message_id=secret_message.pk).exists())
    _assert_derived_again(workspace, case)
    assert_gone(api, workspace, case)


def test_delete_message(api, workspace, case, flowed):
    messages, derived = flowed
    with eager_celery(), override_settings(**PIPELINE):
        response = api.delete(f"/v1/conversations/{CID}/messages/{messages[SECRET_FLOOR - 1].pk}",
                              HTTP_PREFER="return=representation")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["data"] == {"id": messages[SECRET_FLOOR - 1].pk, "deleted": True}
    _assert_lineage(body["lineage"], derived)
    assert not RecallEntry.objects.filter(message_id=messages[SECRET_FLOOR - 1].pk).exists()
    _assert_derived_again(workspace, case)
    assert_gone(api, workspace, case)


def test_delete_message_answers_204_with_the_lineage_header(api, workspace, case, flowed):
    messages, derived = flowed
    with eager_celery(), override_settings(**PIPELINE):
        response = api.delete(f"/v1/conversations/{CID}/messages/{messages[SECRET_FLOOR - 1].pk}")
    assert response.status_code == 204 and not response.content
    _assert_lineage(json.loads(response["Memory-Lineage"]), derived)
    assert_gone(api, workspace, case)


def test_clear(api, workspace, case, flowed):
    _messages, derived = flowed
    with eager_celery(), override_settings(**PIPELINE):
        response = api.delete(f"/v1/conversations/{CID}/messages")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["meta"] == {"deleted_count": len(DIALOGS[case])}
    _assert_lineage(body["lineage"], derived)
    # Nothing remains to derive from: the conversation holds no memory.
    assert body["lineage"]["rederive_job_ids"] == []
    assert not MemoryItem.objects.filter(workspace=workspace, scope=Scope.BRANCH).exists()
    assert not MemoryItem.objects.filter(workspace=workspace, scope=Scope.USER, scope_id=USER).exists()
    assert "summary" not in Conversation.objects.get(workspace=workspace, external_id=CID).metadata
    assert_gone(api, workspace, case)


def _assert_new_conversation_starts_empty(api, workspace, case) -> None:
    """A conversation created again with the same id gets nothing of the old one."""
    message_append(workspace=workspace, external_id=CID, role="user", content="Hello again.", user_id=USER)
    assert not MemoryItem.objects.filter(workspace=workspace).exists()
    assert_gone(api, workspace, case)


def test_delete_conversation(api, workspace, case, flowed):
    _messages, derived = flowed
    with eager_celery(), override_settings(**PIPELINE):
        response = api.delete(f"/v1/conversations/{CID}", HTTP_PREFER="return=representation")
    assert response.status_code == 200, response.content
    lineage = response.json()["lineage"]
    assert derived <= set(lineage["memory_ids"]) and lineage["rederive_job_ids"] == []
    assert not ScopeState.objects.filter(workspace=workspace, scope=Scope.BRANCH).exists()
    _assert_new_conversation_starts_empty(api, workspace, case)


def test_expiry(api, workspace, case, flowed):
    _messages, derived = flowed
    long_ago = timezone.now() - timedelta(days=30)
    Conversation.objects.filter(workspace=workspace, external_id=CID).update(last_message_at=long_ago,
                                                                             created_at=long_ago)
    with eager_celery(), override_settings(MEMORY_CONVERSATION_EXPIRE_DAYS=7, **PIPELINE):
        assert conversations_expire() == 1
    assert not MemoryItem.objects.filter(pk__in=derived).exists()
    # The maintenance job's own actor: the system.
    assert set(MemoryVersion.objects.filter(memory_id__in=derived, operation="deleted")
               .values_list("actor_type", flat=True)) == {"system"}
    _assert_new_conversation_starts_empty(api, workspace, case)


def test_redact_everywhere(api, workspace, case, flowed, admin_user):
    messages, derived = flowed
    secret = SECRETS[case]
    found = workspace_text_occurrences(workspace=workspace, text=secret)
    assert found.memory_ids and found.version_ids and found.rolling_states
    with eager_celery(), override_settings(**PIPELINE):
        result = workspace_text_redact(workspace=workspace, actor=Actor.for_user(admin_user.pk), text=secret)
    assert result["messages_redacted"] == 1
    assert derived <= set(result["lineage"]["memory_ids"])
    assert "[redacted]" in Message.objects.get(pk=messages[SECRET_FLOOR - 1].pk).content
    _assert_derived_again(workspace, case)
    assert_gone(api, workspace, case)


# --- memories: deletion and version redaction ---------------------------------------------


def test_deleting_a_micro_erases_its_macro_and_compacts_what_remains(api, workspace, case, flowed):
    _messages, _derived = flowed
    micro = MemoryItem.objects.get(workspace=workspace, content__contains=SECRETS[case],
                                   summary_tier=SummaryTier.MICRO)
    macro = MemoryItem.objects.get(workspace=workspace, summary_tier=SummaryTier.MACRO)
    other = MemoryItem.objects.get(workspace=workspace, summary_tier=SummaryTier.MICRO,
                                   pk__in=macro.source_memory_ids, coverage_start_floor_no=5)
    assert memory_descendants(workspace=workspace, memory_ids=[micro.pk]) == [macro.pk]
    with eager_celery(), override_settings(**PIPELINE):
        response = api.delete(f"/v1/memories/{micro.pk}")
    assert response.status_code == 200, response.content
    lineage = response.json()["lineage"]
    assert lineage["memory_ids"] == [macro.pk] and lineage["memories_deleted"] == 1
    assert len(lineage["rederive_job_ids"]) == 1
    job = MemoryJob.objects.get(pk=lineage["rederive_job_ids"][0])
    assert job.kind == JobKind.COMPACT and job.status == "succeeded"
    # The macro is gone with every version's text; what remains was compacted anew.
    assert not MemoryVersion.objects.filter(memory_id=macro.pk, redacted_at__isnull=True).exists()
    new_macro = MemoryItem.objects.get(workspace=workspace, summary_tier=SummaryTier.MACRO)
    assert new_macro.source_memory_ids == [other.pk]
    assert SECRETS[case] not in new_macro.content


def test_redacting_a_version_erases_the_summaries_compacted_from_it(api, workspace, case, flowed):
    _messages, _derived = flowed
    micro = MemoryItem.objects.get(workspace=workspace, content__contains=SECRETS[case],
                                   summary_tier=SummaryTier.MICRO)
    macro = MemoryItem.objects.get(workspace=workspace, summary_tier=SummaryTier.MACRO)
    response = api.patch(f"/v1/memories/{micro.pk}", {"content": "A trip is being planned."}, format="json")
    assert response.status_code == 200, response.content
    first = MemoryVersion.objects.filter(memory_id=micro.pk).order_by("version").first()
    with eager_celery(), override_settings(**PIPELINE):
        response = api.post(f"/v1/memories/{micro.pk}/versions/{first.pk}/redact")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["data"]["id"] == first.pk
    assert body["lineage"]["memory_ids"] == [macro.pk]
    assert not MemoryItem.objects.filter(pk=macro.pk).exists()


def test_report_shape():
    report = LineageReport(memory_ids=["mem_a", "mem_b"], summaries_cleared=1, rederive_job_ids=["job_a", "job_a"])
    assert report.as_dict() == {
        "memories_deleted": 2, "memory_ids": ["mem_a", "mem_b"], "summaries_cleared": 1, "rederive_job_ids": ["job_a"],
    }


# --- the admin ----------------------------------------------------------------------------


def test_admin_redaction_shows_where_the_text_also_appears(admin_client, api, workspace, case, flowed):
    micro = MemoryItem.objects.get(workspace=workspace, content__contains=SECRETS[case],
                                   summary_tier=SummaryTier.MICRO)
    macro = MemoryItem.objects.get(workspace=workspace, summary_tier=SummaryTier.MACRO)
    api.patch(f"/v1/memories/{micro.pk}", {"content": "A trip is being planned."}, format="json")
    first = MemoryVersion.objects.filter(memory_id=micro.pk).order_by("version").first()
    url = f"/admin/memories/memoryitem/{micro.pk}/redact/{first.pk}/"
    page = admin_client.get(url).content.decode()
    assert "This text also appears in 1 memory derived from it" in page and macro.pk in page
    replace_page = admin_client.get(f"/admin/memories/memoryitem/{micro.pk}/redact_and_replace/").content.decode()
    assert "This text also appears in 1 memory derived from it" in replace_page
    with eager_celery(), override_settings(**PIPELINE):
        response = admin_client.post(url, {"post": "yes"}, follow=True)
    assert "1 memory(ies) derived from it were erased" in response.content.decode()
    assert not MemoryItem.objects.filter(pk=macro.pk).exists()
    assert not MemoryVersion.objects.filter(memory_id=macro.pk, redacted_at__isnull=True).exists()
    assert MemoryVersion.objects.get(pk=first.pk).redacted_by_type == "user"


def test_admin_redact_everywhere(admin_client, api, workspace, other_workspace, case, flowed):
    url = "/admin/memories/memoryitem/redact_everywhere/"
    assert "Redact a text everywhere" in admin_client.get("/admin/memories/memoryitem/").content.decode()
    secret = SECRETS[case]
    found = workspace_text_occurrences(workspace=workspace, text=secret, messages=True)
    page = admin_client.post(url, {"workspace": workspace.pk, "text": secret}).content.decode()
    sentence = html.unescape(re.search(r'It is in <span id="found-sentence">([^<]+)</span>', page).group(1))
    # Every registered column holding it, counted once, in the registry's words.
    assert "1 message" in sentence and "3 memories" in sentence  # the fact, the micro, the macro
    assert f"{found.columns['memories_memoryversion.content']} memory versions" in sentence
    places = re.findall(r"<tr><td>([^<]+)</td><td>(\d+)</td>", page[page.index('id="text-places"'):])
    assert sum(int(count) for _name, count in places) == sum(found.columns.values())
    derived = len({*found.derived_ids, *found.message_derived_ids})
    assert "Yes, redact everywhere" in page
    assert tables_holding(secret)  # nothing changed yet
    with eager_celery(), override_settings(**PIPELINE):
        response = admin_client.post(url, {"workspace": workspace.pk, "text": secret, "confirmed": "True",
                                           "post": "yes"}, follow=True)
    # The result counts what the preview counted, in the same words, and
    # says what is left; it never quotes the text.
    ((level, text),) = [(m.level_tag, str(m)) for m in response.context["messages"]]
    assert level == "success", text
    assert f"it was in {sentence}" in text and text.endswith("None of it is left.")
    if derived:
        assert f"; {derived} memor{'y' if derived == 1 else 'ies'} derived from what held it erased" in text
    else:
        assert "derived from what held it" not in text
    assert secret not in text
    assert_gone(api, workspace, case)


def test_redact_everywhere_reports_what_its_preview_counted(api, workspace, case, flowed, admin_user):
    secret = SECRETS[case]
    preview = workspace_text_occurrences(workspace=workspace, text=secret, messages=True)
    with eager_celery(), override_settings(**PIPELINE):
        result = workspace_text_redact(workspace=workspace, actor=Actor.for_user(admin_user.pk), text=secret)
    assert result["found"] == preview.columns and result["found"]
    assert result["derived_ids"] == sorted({*preview.derived_ids, *preview.message_derived_ids})
    assert result["left"] == {}


def test_admin_redact_everywhere_needs_both_permissions(client, django_user_model, workspace):
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("reviewer", password="x", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=["view_memoryitem", "change_memoryitem"]))
    client.force_login(user)
    url = "/admin/memories/memoryitem/redact_everywhere/"
    assert client.get(url).status_code == 403
    assert client.post(url, {"workspace": workspace.pk, "text": "secret text", "confirmed": "True",
                             "post": "yes"}).status_code == 403
    assert "Redact a text everywhere" not in client.get("/admin/memories/memoryitem/").content.decode()


# --- embeddings ------------------------------------------------------------------------


@pytest.fixture
def with_vectors(settings):
    import os

    previous = os.environ.get("EMBEDDING_PROVIDER")
    settings.EMBEDDING_PROVIDER = os.environ["EMBEDDING_PROVIDER"] = "offline"
    yield
    os.environ["EMBEDDING_PROVIDER"] = previous or "none"


def test_the_vectors_of_erased_text_go_with_it(api, workspace, with_vectors):
    messages = _dialog_appended(workspace, "ascii")
    secret_message = messages[SECRET_FLOOR - 1]
    fact = MemoryItem.objects.get(workspace=workspace, type=MemoryType.FACT, content__contains=SECRETS["ascii"])
    old = RecallEntry.objects.filter(Q(message_id=secret_message.pk) | Q(memory_id=fact.pk))
    old_ids = set(old.values_list("pk", flat=True))
    assert old_ids and not old.filter(embedding__isnull=True).exists()
    new_text = secret_message.content.replace(SECRETS["ascii"], "(withdrawn)")
    with eager_celery(), override_settings(**PIPELINE):
        response = api.patch(f"/v1/conversations/{CID}/messages/{secret_message.pk}", {"content": new_text},
                             format="json")
    assert fact.pk in response.json()["lineage"]["memory_ids"]
    # The old passages and the fact's entry are gone with their vectors; the
    # edited message is indexed and embedded again from its new text.
    assert not RecallEntry.objects.filter(pk__in=old_ids).exists()
    rebuilt = RecallEntry.objects.filter(message_id=secret_message.pk)
    assert rebuilt.exists() and not rebuilt.filter(embedding__isnull=True).exists()
    assert all("whale8842" not in entry.terms for entry in rebuilt)
    assert_gone(api, workspace, "ascii")


def test_batch_and_admin_deletes_follow_lineage(admin_client, api, workspace, flowed):
    micros = list(MemoryItem.objects.filter(workspace=workspace, summary_tier=SummaryTier.MICRO).order_by(
        "coverage_start_floor_no"))
    macro = MemoryItem.objects.get(workspace=workspace, summary_tier=SummaryTier.MACRO)
    with eager_celery(), override_settings(**PIPELINE):
        response = api.post("/v1/memories/batch/delete", {"ids": [micros[0].pk]}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["data"]["meta"]["deleted"] == 1 and body["lineage"]["memory_ids"] == [macro.pk]
    # The compaction that followed merged what remains; deleting its source in
    # the admin erases that macro too.
    new_macro = MemoryItem.objects.get(workspace=workspace, summary_tier=SummaryTier.MACRO)
    assert new_macro.source_memory_ids == [micros[1].pk]
    with eager_celery(), override_settings(**PIPELINE):
        response = admin_client.post("/admin/memories/memoryitem/", {
            "action": "delete_memories", "_selected_action": [micros[1].pk], "post": "yes"}, follow=True)
    assert response.status_code == 200
    assert not MemoryItem.objects.filter(pk__in=[micros[1].pk, new_macro.pk]).exists()
    assert not MemoryVersion.objects.filter(memory_id=new_macro.pk, redacted_at__isnull=True).exists()


def test_an_erasure_that_fails_in_the_request_is_run_again_by_a_task(api, workspace, case, flowed, monkeypatch):
    from memories.services.lineage import receivers

    messages, derived = flowed
    real = receivers.lineage_erase_messages
    calls = []

    def flaky(**kwargs):
        calls.append(kwargs["message_ids"])
        if len(calls) == 1:
            raise RuntimeError("database went away")
        return real(**kwargs)

    monkeypatch.setattr(receivers, "lineage_erase_messages", flaky)
    with eager_celery(), override_settings(**PIPELINE):
        response = api.delete(f"/v1/conversations/{CID}/messages/{messages[SECRET_FLOOR - 1].pk}")
    # The delete is committed and answered; the task erased what it left.
    assert response.status_code == 204 and "Memory-Lineage" not in response
    assert len(calls) == 2
    assert not MemoryItem.objects.filter(pk__in=derived).exists()
    assert_gone(api, workspace, case)


def test_a_fork_that_read_the_message_is_erased_and_derived_again(api, workspace, case, flowed):
    from conversations.services import branch_create

    messages, _derived = flowed
    branch_create(workspace=workspace, external_id=CID, name="alt", from_message_id=messages[-1].pk)
    with eager_celery(), override_settings(**PIPELINE):
        for text in ("Let's also plan a day trip.", "Sure, where to?", "Maybe Sintra.", "Sintra is lovely."):
            message_append(workspace=workspace, external_id=CID, role="user", content=text, branch="alt")
    fork_scope = branch_scope_id(CID, "alt")
    leaked = MemoryItem.objects.filter(workspace=workspace, scope_id=fork_scope, content__contains=SECRETS[case])
    assert leaked.exists()
    leaked_ids = set(leaked.values_list("pk", flat=True))
    secret_message = messages[SECRET_FLOOR - 1]
    with eager_celery(), override_settings(**PIPELINE):
        response = api.patch(f"/v1/conversations/{CID}/messages/{secret_message.pk}",
                             {"content": secret_message.content.replace(SECRETS[case], "(withdrawn)")}, format="json")
    lineage = response.json()["lineage"]
    assert leaked_ids <= set(lineage["memory_ids"])
    jobs = MemoryJob.objects.filter(pk__in=lineage["rederive_job_ids"])
    assert {job.scope_id for job in jobs} == {branch_scope_id(CID, "main"), fork_scope}
    assert all(job.status == "succeeded" for job in jobs)
    assert MemoryItem.objects.filter(workspace=workspace, scope_id=fork_scope, summary_tier=SummaryTier.MICRO).exists()
    assert_gone(api, workspace, case)
