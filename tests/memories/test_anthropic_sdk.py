"""The official `anthropic` SDK (2.12.0) against a live server: every
`client.beta.memory_stores` method, typed results and typed errors.

The SDK's `memories.create` is the write (upsert by path): it POSTs
`{"content", "path"}` to `/v1/memory_stores/{id}/memories`; the create-only
precondition travels as `extra_body={"precondition": {"type": "not_exists"}}`.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

import anthropic
import pytest
from anthropic.types.beta import BetaManagedAgentsDeletedMemoryStore, BetaManagedAgentsMemoryStore
from anthropic.types.beta.memory_stores import (
    BetaManagedAgentsAPIActor,
    BetaManagedAgentsDeletedMemory,
    BetaManagedAgentsMemory,
    BetaManagedAgentsMemoryPrefix,
    BetaManagedAgentsMemoryVersion,
    BetaManagedAgentsSessionActor,
)

from tests.factories import WorkspaceFactory, make_api_key

pytestmark = pytest.mark.django_db(transaction=True)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def sdk_key(transactional_db):
    workspace = WorkspaceFactory(name="SDK", slug="sdk")
    return make_api_key(workspace), workspace


@pytest.fixture
def client(live_server, sdk_key):
    client = anthropic.Anthropic(api_key=sdk_key[0], base_url=live_server.url)
    yield client
    # Ends the keep-alive connections, so the server threads release their
    # database connections before the test database is dropped.
    client.close()


def test_stores(client, live_server, transactional_db):
    stores = client.beta.memory_stores
    created = stores.create(name="User Preferences", description="Per-user prefs.", metadata={"user": "u1", "tier": "pro"})
    assert isinstance(created, BetaManagedAgentsMemoryStore)
    assert created.id.startswith("memstore_") and created.type == "memory_store"
    assert created.description == "Per-user prefs." and created.metadata == {"user": "u1", "tier": "pro"}
    assert isinstance(created.created_at, datetime) and created.archived_at is None

    fetched = stores.retrieve(created.id)
    assert fetched.id == created.id and fetched.name == "User Preferences"

    updated = stores.update(created.id, name="Prefs", metadata={"tier": None, "team": "core"})
    assert updated.name == "Prefs" and updated.metadata == {"user": "u1", "team": "core"}

    others = [stores.create(name=f"extra {i}") for i in range(4)]
    listed = list(stores.list(limit=2))  # auto-pagination follows next_page
    assert [s.id for s in listed] == [s.id for s in reversed([created, *others])]
    first_page = stores.list(limit=2)
    assert len(first_page.data) == 2 and first_page.next_page and first_page.has_next_page()

    ranged = list(stores.list(created_at_gte=datetime.now() - timedelta(hours=1), created_at_lte=datetime.now() + timedelta(hours=1)))
    assert len(ranged) == 5

    archived = stores.archive(others[0].id)
    assert archived.archived_at is not None
    assert others[0].id not in [s.id for s in stores.list()]
    assert others[0].id in [s.id for s in stores.list(include_archived=True)]
    with pytest.raises(anthropic.BadRequestError) as excinfo:
        stores.update(others[0].id, name="nope")
    assert excinfo.value.status_code == 400

    deleted = stores.delete(others[1].id)
    assert isinstance(deleted, BetaManagedAgentsDeletedMemoryStore)
    assert deleted.id == others[1].id and deleted.type == "memory_store_deleted"
    with pytest.raises(anthropic.NotFoundError):
        stores.retrieve(others[1].id)
    with pytest.raises(anthropic.BadRequestError):
        stores.create(name="")


def test_memories_and_versions(client, sdk_key):
    stores = client.beta.memory_stores
    store = stores.create(name="Notes")
    memories = stores.memories

    written = memories.create(store.id, path="/formatting_standards.md", content="All reports use GAAP formatting.")
    assert isinstance(written, BetaManagedAgentsMemory)
    assert written.id.startswith("mem_") and written.memory_store_id == store.id
    assert written.memory_version_id.startswith("memver_")
    assert written.content is None  # create answers with the basic view
    assert written.content_sha256 == sha("All reports use GAAP formatting.")
    assert written.content_size_bytes == len("All reports use GAAP formatting.")

    # Upsert: the same path replaces the content, keeping the id.
    replaced = memories.create(store.id, path="/formatting_standards.md", content="Dates are ISO-8601.", view="full")
    assert replaced.id == written.id and replaced.content == "Dates are ISO-8601."

    # Create-only guard: a taken path is a 409 memory_precondition_failed.
    with pytest.raises(anthropic.ConflictError) as excinfo:
        memories.create(store.id, path="/formatting_standards.md", content="x", extra_body={"precondition": {"type": "not_exists"}})
    assert excinfo.value.status_code == 409
    assert excinfo.value.body["error"]["type"] == "memory_precondition_failed"

    fetched = memories.retrieve(written.id, memory_store_id=store.id)
    assert fetched.content == "Dates are ISO-8601." and fetched.path == "/formatting_standards.md"
    assert memories.retrieve(written.id, memory_store_id=store.id, view="basic").content is None

    # Update: content with a content_sha256 precondition, then a rename.
    edited = memories.update(
        written.id,
        memory_store_id=store.id,
        content="CORRECTED: Dates are ISO-8601.",
        precondition={"type": "content_sha256", "content_sha256": fetched.content_sha256},
    )
    assert edited.content_sha256 == sha("CORRECTED: Dates are ISO-8601.")
    with pytest.raises(anthropic.ConflictError) as excinfo:
        memories.update(
            written.id,
            memory_store_id=store.id,
            content="lost update",
            precondition={"type": "content_sha256", "content_sha256": fetched.content_sha256},
        )
    assert excinfo.value.status_code == 409
    renamed = memories.update(written.id, memory_store_id=store.id, path="/archive/2026_q1_formatting.md")
    assert renamed.id == written.id and renamed.path == "/archive/2026_q1_formatting.md"
    memories.create(store.id, path="/taken.md", content="t")
    with pytest.raises(anthropic.ConflictError) as excinfo:
        memories.update(written.id, memory_store_id=store.id, path="/taken.md")
    assert excinfo.value.body["error"]["type"] == "conflict_error"

    # Listing: depth roll-ups, path_prefix, auto-pagination across prefixes.
    for path in ("/notes/a.md", "/notes/b.md", "/notes/deep/c.md", "/notes-archive/old.md"):
        memories.create(store.id, path=path, content=f"content of {path}")
    top = list(memories.list(store.id, depth=1, limit=2))
    assert [(type(e).__name__, e.path) for e in top] == [
        ("BetaManagedAgentsMemoryPrefix", "/archive/"),
        ("BetaManagedAgentsMemoryPrefix", "/notes-archive/"),
        ("BetaManagedAgentsMemoryPrefix", "/notes/"),
        ("BetaManagedAgentsMemory", "/taken.md"),
    ]
    assert all(isinstance(e, BetaManagedAgentsMemoryPrefix) for e in top[:3])
    notes = list(memories.list(store.id, path_prefix="/notes/", limit=1))
    assert [m.path for m in notes] == ["/notes/a.md", "/notes/b.md", "/notes/deep/c.md"]
    assert all(m.content is None and m.content_sha256 for m in notes)
    full = memories.list(store.id, path_prefix="/notes/", depth=1, view="full")
    assert [(e.type, e.path) for e in full.data] == [("memory", "/notes/a.md"), ("memory", "/notes/b.md"), ("memory_prefix", "/notes/deep/")]
    assert full.data[0].content == "content of /notes/a.md"
    with pytest.raises(anthropic.BadRequestError):
        memories.list(store.id, path_prefix="/notes")

    # Delete, conditional and not.
    victim = notes[0]
    with pytest.raises(anthropic.ConflictError):
        memories.delete(victim.id, memory_store_id=store.id, expected_content_sha256=sha("something else"))
    gone = memories.delete(victim.id, memory_store_id=store.id, expected_content_sha256=victim.content_sha256)
    assert isinstance(gone, BetaManagedAgentsDeletedMemory) and gone.id == victim.id and gone.type == "memory_deleted"
    with pytest.raises(anthropic.NotFoundError):
        memories.retrieve(victim.id, memory_store_id=store.id)

    # Versions: newest first, filters, retrieve with content, redact.
    versions = stores.memory_versions
    history = list(versions.list(store.id, memory_id=written.id, limit=2))
    assert [v.operation for v in history] == ["modified", "modified", "modified", "created"]
    assert all(isinstance(v, BetaManagedAgentsMemoryVersion) and v.content is None for v in history)
    assert history[0].id == renamed.memory_version_id
    key_id = sdk_key[1].api_keys.get().pk
    assert isinstance(history[0].created_by, BetaManagedAgentsAPIActor) and history[0].created_by.api_key_id == key_id
    assert [v.operation for v in versions.list(store.id, memory_id=victim.id)] == ["deleted", "created"]
    assert {v.operation for v in versions.list(store.id, operation="created")} == {"created"}
    assert len(list(versions.list(store.id, api_key_id=key_id))) == len(list(versions.list(store.id)))
    assert list(versions.list(store.id, created_at_gte=datetime.now() + timedelta(days=1))) == []

    oldest = versions.retrieve(history[-1].id, memory_store_id=store.id)
    assert oldest.content == "All reports use GAAP formatting." and oldest.path == "/formatting_standards.md"
    redacted = versions.redact(oldest.id, memory_store_id=store.id)
    assert redacted.redacted_at is not None and redacted.content is None and redacted.path is None
    assert redacted.content_sha256 is None and redacted.content_size_bytes is None
    assert isinstance(redacted.redacted_by, BetaManagedAgentsAPIActor)
    assert versions.retrieve(oldest.id, memory_store_id=store.id).redacted_at is not None
    with pytest.raises(anthropic.ConflictError):
        versions.redact(history[0].id, memory_store_id=store.id)  # the live head

    # A session actor reads back as the SDK's session actor type.
    client.put(
        "/v1/conversations/chat-1/resources",
        body={"resources": [{"type": "memory_store", "memory_store_id": store.id}]},
        cast_to=object,
    )
    client.post(
        f"/v1/memory_stores/{store.id}/tools/memory_write",
        body={"input": {"path": "/learned.md", "content": "tea"}, "conversation_id": "chat-1"},
        cast_to=object,
    )
    by_session = list(versions.list(store.id, session_id="chat-1"))
    assert len(by_session) == 1 and isinstance(by_session[0].created_by, BetaManagedAgentsSessionActor)
    assert by_session[0].created_by.session_id == "chat-1"

    # Other workspaces see nothing; archived stores refuse writes.
    other_key = make_api_key(WorkspaceFactory(name="Other SDK", slug="other-sdk"))
    other = anthropic.Anthropic(api_key=other_key, base_url=str(client.base_url))
    with pytest.raises(anthropic.NotFoundError):
        other.beta.memory_stores.memories.retrieve(written.id, memory_store_id=store.id)
    stores.archive(store.id)
    with pytest.raises(anthropic.BadRequestError):
        memories.create(store.id, path="/new.md", content="x")
    assert memories.retrieve(written.id, memory_store_id=store.id).path == "/archive/2026_q1_formatting.md"
    other.close()


def test_authentication_errors(live_server, transactional_db):
    bad = anthropic.Anthropic(api_key="not-a-key", base_url=live_server.url, max_retries=0)
    with pytest.raises(anthropic.AuthenticationError):
        bad.beta.memory_stores.list()
    bad.close()


def test_readonly_key_is_permission_denied(live_server, sdk_key):
    _, workspace = sdk_key
    reader = anthropic.Anthropic(api_key=make_api_key(workspace, read_only=True, name="ro"), base_url=live_server.url)
    with pytest.raises(anthropic.PermissionDeniedError):
        reader.beta.memory_stores.create(name="x")
    assert reader.beta.memory_stores.list().data == []
    reader.close()


async def test_async_client(live_server, sdk_key):
    client = anthropic.AsyncAnthropic(api_key=sdk_key[0], base_url=live_server.url)
    store = await client.beta.memory_stores.create(name="Async")
    memory = await client.beta.memory_stores.memories.create(store.id, path="/a.md", content="hello")
    fetched = await client.beta.memory_stores.memories.retrieve(memory.id, memory_store_id=store.id)
    assert fetched.content == "hello"
    with pytest.raises(anthropic.ConflictError):
        await client.beta.memory_stores.memories.update(
            memory.id, memory_store_id=store.id, content="x", precondition={"type": "content_sha256", "content_sha256": sha("no")}
        )
    paths = [m.path async for m in client.beta.memory_stores.memories.list(store.id)]
    assert paths == ["/a.md"]
    versions = [v async for v in client.beta.memory_stores.memory_versions.list(store.id)]
    assert [v.operation for v in versions] == ["created"]
    assert (await client.beta.memory_stores.delete(store.id)).type == "memory_store_deleted"
    await client.close()
