"""Redacted text survives nowhere: not in versions, the search index, the admin
log or job payloads. Checked by scanning every column of every table."""

from __future__ import annotations

import json

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.actors import Actor
from memories.models import MemoryItem, MemoryJob, MemoryVersion
from memories.search import FTS_TABLE
from memories.services.items import memory_item_delete, memory_item_update, memory_redact_and_replace
from memories.services.redaction import REDACTED_PLACEHOLDER, TextMatcher
from memories.services.versioning import memory_version_redact, memory_versions_redact
from memory_project.errors import ConflictError
from tests.memories.helpers_items import AGENT, make_item

pytestmark = pytest.mark.django_db

SECRET = "我的银行卡密码是 Whale-8842-鲸鱼座"
OPERATOR = Actor.for_user(1)


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


def tables_holding(needle: str) -> set[str]:
    """Every table (SQLite: FTS shadow tables included) with a value containing
    `needle`, as text, JSON or bytes."""
    raw = needle.encode("utf-8")
    found: set[str] = set()
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            if connection.vendor == "sqlite" and table.endswith("_fts"):
                continue  # the virtual table itself: its storage is the shadow tables
            cursor.execute(f"SELECT * FROM {_quote(table)}")
            for row in cursor.fetchall():
                for value in row:
                    if isinstance(value, (dict, list)):
                        value = json.dumps(value, ensure_ascii=False)
                    if isinstance(value, memoryview):
                        value = value.tobytes()
                    if (isinstance(value, str) and needle in value) or (isinstance(value, bytes) and raw in value):
                        found.add(table)
    return found


def fts_terms() -> set[str]:
    """The terms of the SQLite trigram index, read through an fts5vocab table."""
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.h_vocab USING fts5vocab(main, {FTS_TABLE}, 'row')")
        cursor.execute("SELECT term FROM temp.h_vocab")
        terms = {row[0] for row in cursor.fetchall()}
        cursor.execute("DROP TABLE temp.h_vocab")
    return terms


SECRET_TRIGRAMS = {"鲸鱼座", "-鲸鱼", "884", "ale", "银行卡"}


def fts_blob_trigrams() -> set[str]:
    """Chinese trigrams of the secret whose bytes occur anywhere in the FTS5
    shadow tables' raw storage. A deletion in FTS5 writes a delete marker that
    repeats the deleted terms, so this catches text the query layer hides."""
    grams = {SECRET[i : i + 3] for i in range(len(SECRET) - 2)}
    grams = {gram for gram in grams if all(ord(char) > 127 for char in gram)}
    hits: set[str] = set()
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE %s", [f"{FTS_TABLE}_%"])
        for (table,) in cursor.fetchall():
            cursor.execute(f"SELECT * FROM {_quote(table)}")
            for row in cursor.fetchall():
                for value in row:
                    if isinstance(value, str):
                        data = value.encode()
                    elif isinstance(value, (bytes, memoryview)):
                        data = bytes(value)
                    else:
                        continue
                    hits.update(gram for gram in grams if gram.encode() in data)
    return hits


@pytest.fixture
def leaked(api, workspace, admin_user):
    """A memory whose secret reached versions, the index, the admin log and a job."""
    item = make_item(workspace, content=f"备注:{SECRET}")
    memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"importance": 0.9})
    response = api.get("/v1/memories", {"q": "Whale-8842-鲸鱼"})
    assert [row["id"] for row in response.json()["data"]] == [item.pk]
    LogEntry.objects.create(
        user=admin_user,
        content_type=ContentType.objects.get_for_model(MemoryItem),
        object_id=item.pk,
        object_repr=f"备注:{SECRET}"[:200],
        action_flag=CHANGE,
        change_message=json.dumps([{"changed": {"fields": ["Content"]}}, {"note": SECRET}], ensure_ascii=False),
    )
    unrelated = LogEntry.objects.create(
        user=admin_user,
        content_type=ContentType.objects.get_for_model(MemoryItem),
        object_id="mem_other",
        object_repr="harmless",
        action_flag=CHANGE,
        change_message="[]",
    )
    MemoryJob.objects.create(
        workspace=workspace,
        kind="extract",
        scope="chat",
        scope_id="conv-1",
        status="failed",
        payload={"floors": [1, 2], "preview": f"…{SECRET[4:]}"},
        result={"facts": [{"text": SECRET}], "count": 1},
        error=f"provider refused: 备注:{SECRET}",
    )
    found = tables_holding("Whale-8842-鲸鱼座")
    assert {"memories_memoryversion", "memories_memoryitem", "django_admin_log", "memories_memoryjob"} <= found
    if connection.vendor == "sqlite":
        assert fts_terms() >= SECRET_TRIGRAMS
    return item, unrelated


def _assert_gone(api, item, unrelated):
    assert tables_holding("Whale-8842-鲸鱼座") == set()
    assert tables_holding("鲸鱼座") == set()
    assert tables_holding("银行卡密码") == set()
    assert api.get("/v1/memories", {"q": "Whale-8842"}).json()["data"] == []
    assert api.get("/v1/memories", {"q": "鲸鱼"}).json()["data"] == []
    if connection.vendor == "sqlite":
        assert not (SECRET_TRIGRAMS & fts_terms())
        assert fts_blob_trigrams() == set()
    entry = LogEntry.objects.get(object_id=item.pk)
    assert entry.object_repr == REDACTED_PLACEHOLDER and entry.change_message == REDACTED_PLACEHOLDER
    assert LogEntry.objects.get(pk=unrelated.pk).object_repr == "harmless"
    job = MemoryJob.objects.get()
    assert job.payload == {"floors": [1, 2], "preview": REDACTED_PLACEHOLDER}
    assert job.result == {"facts": [{"text": REDACTED_PLACEHOLDER}], "count": 1}
    assert job.error == REDACTED_PLACEHOLDER


def test_redact_and_replace_leaves_no_copy(api, workspace, leaked):
    item, unrelated = leaked
    replaced, redacted = memory_redact_and_replace(
        workspace=workspace, actor=OPERATOR, memory_id=item.pk, content="备注:[已删除]"
    )
    assert replaced.content == "备注:[已删除]" and replaced.version == 3
    assert len(redacted) == 2 and all(v.redacted_at and v.redacted_by_user_id == 1 for v in redacted)
    _assert_gone(api, item, unrelated)
    # Actor and timestamps stay on the redacted versions.
    for version in MemoryVersion.objects.filter(memory_id=item.pk, version__lt=3):
        assert version.actor_type == "api_key" and version.created_at is not None and version.content is None
    assert api.get(f"/v1/memories/{item.pk}").json()["data"]["content"] == "备注:[已删除]"


def test_delete_then_redact_all_leaves_no_copy(api, workspace, leaked):
    item, unrelated = leaked
    memory_item_delete(workspace=workspace, actor=AGENT, memory_id=item.pk)
    redacted = memory_versions_redact(workspace=workspace, memory_id=item.pk, actor=OPERATOR)
    assert len(redacted) == 3
    _assert_gone(api, item, unrelated)
    assert api.get(f"/v1/memories/{item.pk}/versions").json()["meta"]["total"] == 3


def test_redacting_versions_one_by_one_through_the_api(api, workspace, leaked):
    item, unrelated = leaked
    assert api.delete(f"/v1/memories/{item.pk}").status_code == 200
    for version in MemoryVersion.objects.filter(memory_id=item.pk):
        assert api.post(f"/v1/memories/{item.pk}/versions/{version.pk}/redact").status_code == 200
    _assert_gone(api, item, unrelated)


def test_head_version_cannot_be_redacted(workspace):
    item = make_item(workspace, content="still live")
    with pytest.raises(ConflictError):
        memory_version_redact(workspace=workspace, version_id=item.current_version_id, actor=OPERATOR)
    with pytest.raises(ConflictError):
        memory_versions_redact(
            workspace=workspace, memory_id=item.pk, actor=OPERATOR, version_ids=[item.current_version_id]
        )
    # Redacting "all" of a live memory skips its head.
    assert memory_versions_redact(workspace=workspace, memory_id=item.pk, actor=OPERATOR) == []
    assert MemoryItem.objects.get(pk=item.pk).content == "still live"


def test_redact_and_replace_refuses_identical_content(workspace):
    item = make_item(workspace, content="same")
    with pytest.raises(Exception) as excinfo:
        memory_redact_and_replace(workspace=workspace, actor=OPERATOR, memory_id=item.pk, content="same")
    assert "differ" in str(excinfo.value)
    assert MemoryVersion.objects.get(memory_id=item.pk).redacted_at is None


def test_text_matcher_finds_copies_not_coincidences():
    text = "The access code for the vault is 7731-alpha-omega"
    matcher = TextMatcher([text])
    assert matcher.matches(f"log: {text} (quoted)")
    assert matcher.matches(text[:30] + "…") and matcher.matches("…" + text[-20:])
    assert matcher.matches(f"repr: {text[:200][:25]}")
    # A piece from the middle, or a shared opening that is not where a cut was,
    # is a coincidence elsewhere, and a copy only in the memory's own entries.
    middle = "log: code for the vault is 7731 (truncated)"
    assert not matcher.matches(middle) and matcher.matches(middle, own=True)
    assert not matcher.matches("The access code for the vault is 0000-beta")
    assert not matcher.matches("the vault is closed", own=True)
    short = TextMatcher(["喜欢咖啡"])
    assert short.matches("喜欢咖啡") and short.matches(" 喜欢咖啡\n")
    assert not short.matches("用户喜欢咖啡。") and short.matches("用户喜欢咖啡。", own=True)
    one = TextMatcher(["a"])
    assert one.matches("a") and not one.matches("Changed importance and confidence.")
    assert not TextMatcher([""]) and not TextMatcher(["  "])


def _log(user, obj_id: str, text: str) -> LogEntry:
    return LogEntry.objects.create(
        user=user,
        content_type=ContentType.objects.get_for_model(MemoryItem),
        object_id=obj_id,
        object_repr=text,
        action_flag=CHANGE,
        change_message=text,
    )


def test_redacting_a_one_character_memory_touches_only_its_own_rows(workspace, other_workspace, admin_user):
    """The scrub reads the workspace's own log entries and jobs only, and a short
    text is found as a substring only in the entries about the memory itself."""
    item = make_item(workspace, content="a")
    memory_item_update(workspace=workspace, actor=AGENT, memory_id=item.pk, changes={"content": "b"})
    neighbour = make_item(workspace, content="another fact")
    foreign = make_item(other_workspace, content="a")
    own = _log(admin_user, item.pk, "Changed a field")
    same_tenant = _log(admin_user, neighbour.pk, "Changed a field")
    whole = _log(admin_user, neighbour.pk, "a")
    others = [_log(admin_user, foreign.pk, text) for text in ("a", "Changed a field")]
    others.append(_log(admin_user, "mem_nowhere", "a"))
    foreign_job = MemoryJob.objects.create(
        workspace=other_workspace, kind="extract", scope="chat", scope_id="c", payload={"x": "a"}, error="a"
    )
    global_job = MemoryJob.objects.create(kind="maintenance", payload={"x": "a"}, error="a")
    first = MemoryVersion.objects.get(memory_id=item.pk, version=1)
    with CaptureQueriesContext(connection) as queries:
        memory_version_redact(workspace=workspace, version_id=first.pk, actor=OPERATOR)
    assert LogEntry.objects.get(pk=own.pk).object_repr == REDACTED_PLACEHOLDER
    assert LogEntry.objects.get(pk=whole.pk).object_repr == REDACTED_PLACEHOLDER
    assert LogEntry.objects.get(pk=same_tenant.pk).object_repr == "Changed a field"
    for entry in others:
        unchanged = LogEntry.objects.get(pk=entry.pk)
        assert (unchanged.object_repr, unchanged.change_message) == (entry.object_repr, entry.change_message)
    for job in (foreign_job, global_job):
        job.refresh_from_db()
        assert (job.payload, job.error) == ({"x": "a"}, "a")
    # No statement reads the log (or the jobs) without the workspace's ids.
    log_reads = [q["sql"] for q in queries.captured_queries if "django_admin_log" in q["sql"] and "SELECT" in q["sql"]]
    assert log_reads and all("object_id" in sql and "workspace_id" in sql for sql in log_reads)
    job_reads = [q["sql"] for q in queries.captured_queries if 'FROM "memories_memoryjob"' in q["sql"]]
    assert job_reads and all("workspace_id" in sql for sql in job_reads)
