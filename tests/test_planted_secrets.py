"""The planted-secret scan: a distinct secret in every place a client can put
text (conversation and message fields, dict keys, memory keys and paths,
stores, Claude session lines, LangGraph checkpoints and store values, OpenAI
session items, MCP), then erased by a route, then looked for everywhere: every
column of every table (FTS shadow tables included), the SQLite file and its
write-ahead log, the PostgreSQL table and index files, the Redis keys, and the
workspace export. Every route must leave 0 occurrences."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings

from accounts.actors import Actor
from memories.services.lineage.text import workspace_text_occurrences, workspace_text_redact
from tests.memories.pipeline_helpers import eager_celery
from tests.memories.test_lineage import export_text, tables_holding

pytestmark = pytest.mark.django_db(transaction=True)

PIPELINE = {"MEMORY_EXTRACT_MIN_FLOORS": 2, "MEMORY_EXTRACT_BATCH_FLOORS": 4, "MEMORY_COMPACT_MIN_MICROS": 2}
CID = "planted-1"


def _secret(n: int) -> str:
    return f"qzv{n:02d}plantedsecret{n * 7919:05d}x"


# Where each secret goes: (label, secret).
PLACES = [
    "conversation.metadata.title", "message.content", "message.metadata.tool_args", "message.content.dict_key",
    "memory.fact_key", "memory.content", "memory.metadata", "store.description", "store.memory.path", "store.memory.content",
    "claude.entry", "langgraph.checkpoint", "langgraph.store.value", "openai.item", "resource.instructions",
    "mcp.remember",
]
SECRETS = {place: _secret(n) for n, place in enumerate(PLACES, start=1)}


def _plant(api, mcp_call) -> None:
    s = SECRETS
    ok = (200, 201)
    assert api.post("/v1/conversations", {"conversation_id": CID, "user_id": "u-planted",
                                          "metadata": {"title": s["conversation.metadata.title"]}},
                    format="json").status_code in ok
    with eager_celery(), override_settings(**PIPELINE):
        for body in (
            {"role": "user", "content": f"My badge code is {s['message.content']}, keep it."},
            {"role": "assistant", "content": "Noted.", "metadata": {"tool_args": {"q": s["message.metadata.tool_args"]}}},
            {"role": "user", "content": {s["message.content.dict_key"]: "a value", "text": "see the key"}},
            {"role": "assistant", "content": "All noted."},
        ):
            response = api.post(f"/v1/conversations/{CID}/messages", body, format="json")
            assert response.status_code == 201, response.content
    assert api.post("/v1/memories", {"scope": "global", "type": "fact", "fact_key": s["memory.fact_key"],
                                     "content": f"A fact: {s['memory.content']}",
                                     "metadata": {"ticket": s["memory.metadata"]}},
                    format="json").status_code in ok
    store = api.post("/v1/memory_stores", {"name": "planted", "description": s["store.description"]},
                     format="json").json()
    assert api.post(f"/v1/memory_stores/{store['id']}/memories",
                    {"path": f"/notes/{s['store.memory.path']}.md", "content": s["store.memory.content"]},
                    format="json").status_code in ok
    entry = {"type": "user", "uuid": "u1", "message": {"role": "user", "content": s["claude.entry"]}}
    assert api.post("/v1/claude_sessions/append", {"project_key": "p", "session_id": "s", "entries": [entry]},
                    format="json").status_code in ok
    blob = base64.b64encode(json.dumps({"messages": [s["langgraph.checkpoint"]]}).encode()).decode()
    assert api.post("/v1/langgraph_checkpoints", {"thread_id": "lg-1", "checkpoint_id": "0001", "type": "json",
                                                  "checkpoint": blob, "metadata": {"step": 1}},
                    format="json").status_code in ok
    assert api.post("/v1/langgraph_store/batch", {"ops": [{"op": "put", "namespace": ["notes"], "key": "k1",
                                                           "value": {"text": s["langgraph.store.value"]}}]},
                    format="json").status_code in ok
    assert api.post("/v1/openai_sessions/oa-1/items", {"items": [{"role": "user", "content": s["openai.item"]}]},
                    format="json").status_code in ok
    assert api.put(f"/v1/conversations/{CID}/resources", {"resources": [
        {"type": "memory_store", "memory_store_id": store["id"], "access": "read_only", "instructions": s["resource.instructions"]}]},
        format="json").status_code in ok
    result = mcp_call("remember", {"content": f"Remember {s['mcp.remember']}", "user_id": "u-planted"})
    assert result.get("isError") is not True, result


# --- where to look ---------------------------------------------------------------------------


def _postgres_files_holding(secrets: list[str]) -> dict[str, list[str]]:
    """PostgreSQL: the secrets found in the files of this database's tables,
    TOAST tables and indexes, after a checkpoint wrote every page out."""
    with connection.cursor() as cursor:
        cursor.execute("CHECKPOINT")
        cursor.execute("SHOW data_directory")
        data_directory = Path(cursor.fetchone()[0])
        cursor.execute(
            "SELECT c.relname, pg_relation_filepath(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind IN ('r', 't', 'i') AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
        )
        relations = cursor.fetchall()
    found: dict[str, list[str]] = {}
    needles = [(secret, secret.encode()) for secret in secrets]
    for name, relative in relations:
        if not relative:
            continue
        base = data_directory / relative
        for path in [base, *sorted(base.parent.glob(base.name + ".[0-9]*"))]:
            if not path.exists():
                continue
            data = path.read_bytes()
            for secret, needle in needles:
                if needle in data:
                    found.setdefault(secret, []).append(name)
    return found


def _sqlite_files_holding(secrets: list[str]) -> dict[str, list[str]]:
    path = Path(connection.settings_dict["NAME"])
    found: dict[str, list[str]] = {}
    for candidate in (path, Path(f"{path}-wal")):
        if candidate.exists():
            data = candidate.read_bytes()
            for secret in secrets:
                if secret.encode() in data:
                    found.setdefault(secret, []).append(candidate.name)
    return found


def _redis_holding(secrets: list[str]) -> dict[str, list[str]]:
    import redis

    found: dict[str, list[str]] = {}
    for url in {getattr(settings, "CACHE_URL", ""), settings.CELERY_BROKER_URL}:
        if not url.startswith("redis"):
            continue
        client = redis.Redis.from_url(url)
        for key in client.scan_iter(count=1000):
            kind = client.type(key)
            values = [key]
            if kind == b"string":
                values.append(client.get(key) or b"")
            elif kind == b"list":
                values += client.lrange(key, 0, -1)
            elif kind == b"hash":
                values += [part for pair in client.hgetall(key).items() for part in pair]
            elif kind == b"set":
                values += list(client.smembers(key))
            elif kind == b"zset":
                values += client.zrange(key, 0, -1)
            for secret in secrets:
                if any(secret.encode() in value for value in values):
                    found.setdefault(secret, []).append(key.decode(errors="replace"))
    return found


def scan(workspace, secrets: list[str]) -> dict[str, dict]:
    """Every place each secret was found; {} when none holds any."""
    report: dict[str, dict] = {}
    tables = {secret: sorted(held) for secret in secrets if (held := tables_holding(secret))}
    if tables:
        report["tables"] = tables
    files = _sqlite_files_holding(secrets) if connection.vendor == "sqlite" else _postgres_files_holding(secrets)
    if files:
        report["files"] = files
    redis_found = _redis_holding(secrets)
    if redis_found:
        report["redis"] = redis_found
    exported = export_text(workspace)
    in_export = [secret for secret in secrets if secret in exported]
    if in_export:
        report["export"] = in_export
    return report


def _flush_wal() -> None:
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")


# --- fixtures ------------------------------------------------------------------------------


@pytest.fixture
def mcp_call(workspace, api_key):
    from accounts.models import ApiKey
    from agent_tools.mcp.tools import agent_tool_execute


    def call(name: str, arguments: dict) -> dict:
        key = ApiKey.objects.filter(workspace=workspace).first()
        result = agent_tool_execute(workspace=workspace, api_key=key, name=name, arguments=arguments,
                                    actor=Actor.for_api_key(key.pk))
        return {"isError": result.error is not None, "content": result.content}

    return call


@pytest.fixture
def planted(api, workspace, mcp_call):
    _plant(api, mcp_call)
    _flush_wal()
    before = scan(workspace, list(SECRETS.values()))
    # Each secret is really there before the erasure (so the scan can see it).
    assert set(before.get("tables", {})) == set(SECRETS.values()), sorted(
        place for place, secret in SECRETS.items() if secret not in before.get("tables", {}))
    return before


# --- the routes ------------------------------------------------------------------------------


def test_redact_everywhere_leaves_no_secret_anywhere(api, workspace, planted, admin_user):
    operator = Actor.for_user(admin_user.pk)
    for place, secret in SECRETS.items():
        found = workspace_text_occurrences(workspace=workspace, text=secret, messages=True)
        assert found.columns or found.memory_ids or found.message_ids, place
        with eager_celery(), override_settings(**PIPELINE):
            workspace_text_redact(workspace=workspace, actor=operator, text=secret)
    assert scan(workspace, list(SECRETS.values())) == {}
    for secret in SECRETS.values():
        assert workspace_text_occurrences(workspace=workspace, text=secret, messages=True).columns == {}


def test_deleting_the_conversations_leaves_no_conversation_secret(api, workspace, planted):
    conversation_secrets = [SECRETS[p] for p in PLACES if p.startswith(("conversation.", "message.", "claude.",
                                                                         "langgraph.checkpoint", "openai.",
                                                                         "resource."))]
    with eager_celery(), override_settings(**PIPELINE):
        conversations = api.get("/v1/conversations", {"limit": 100}).json()["data"]
        for conversation in conversations:
            response = api.delete(f"/v1/conversations/{conversation['conversation_id']}")
            assert response.status_code in (200, 204), response.content
    assert scan(workspace, conversation_secrets) == {}


def test_deleting_messages_erases_their_mirrors_and_derived_copies(api, workspace, planted):
    """A message's content, metadata and dict keys, and the Claude session
    line mirrored as a message: deleting the messages erases all of them."""
    message_secrets = [SECRETS[p] for p in ("message.content", "message.metadata.tool_args",
                                            "message.content.dict_key", "claude.entry")]
    with eager_celery(), override_settings(**PIPELINE):
        for cid in (CID, *[c["conversation_id"] for c in api.get("/v1/conversations", {"limit": 100}).json()["data"]
                           if c["conversation_id"].startswith("claude:")]):
            for message in api.get(f"/v1/conversations/{cid}/messages", {"limit": 100}).json()["data"]:
                response = api.delete(f"/v1/conversations/{cid}/messages/{message['id']}")
                assert response.status_code in (200, 204), response.content
    entries = api.get("/v1/claude_sessions/entries", {"project_key": "p", "session_id": "s"}).json()["data"]
    assert not entries
    assert scan(workspace, message_secrets) == {}
