"""Workspace export / import: an exact round trip of every table a workspace
owns, a copy under a new slug with re-issued ids, and refusal of bad files."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts import backup
from accounts.actors import Actor
from accounts.models import ApiKey, Workspace
from accounts.selectors import api_key_authenticate
from accounts.services import api_key_create, api_key_revoke
from conversations import models as cm
from framework_state import models as fm
from memories import models as mm
from memories.services.versioning import content_fingerprint, memory_version_redact, version_record
from memory_project.errors import ConflictError, ValidationError
from tests.factories import WorkspaceFactory

pytestmark = pytest.mark.django_db


def _item(workspace, *, content: str, actor: Actor, **extra) -> mm.MemoryItem:
    sha, size = content_fingerprint(content)
    item = mm.MemoryItem.objects.create(
        workspace=workspace, content=content, content_sha256=sha, content_size_bytes=size, **extra
    )
    version_record(item=item, operation=mm.VersionOperation.CREATED, actor=actor)
    return item


def _modify(item: mm.MemoryItem, content: str, actor: Actor) -> None:
    item.content = content
    item.content_sha256, item.content_size_bytes = content_fingerprint(content)
    item.version += 1
    item.save()
    version_record(item=item, operation=mm.VersionOperation.MODIFIED, actor=actor)


@pytest.fixture
def populated(workspace):
    """One or more rows in every table the workspace owns."""
    keys = {"live": api_key_create(workspace=workspace, name="agent"), "ro": None}
    keys["ro"] = api_key_create(workspace=workspace, name="reader", read_only=True)
    api_key_revoke(api_key=api_key_create(workspace=workspace, name="old").api_key)
    actor = Actor.for_api_key(keys["live"].api_key.pk)

    conv = cm.Conversation.objects.create(
        workspace=workspace, external_id="会话-1", user_id="u1", metadata={"summary": "s", "n": [1, 2.5, None]},
        last_message_at=timezone.now(), message_count=3,
    )
    main = cm.Branch.objects.create(conversation=conv, name="main", next_floor_no=4)
    messages = [
        cm.Message.objects.create(
            workspace=workspace, conversation=conv, branch=main, floor_no=n, role="user" if n % 2 else "assistant",
            content=[{"type": "text", "text": f"floor {n} ✓"}] if n != 2 else "plain",
            metadata={"k": n}, content_size_bytes=10, token_estimate=3, idempotency_key=f"idem-{n}",
        )
        for n in (1, 2, 3)
    ]
    fork = cm.Branch.objects.create(
        conversation=conv, name="alt", parent=main, fork_message_id=messages[1].pk, fork_floor_no=2, next_floor_no=4
    )
    cm.Message.objects.create(workspace=workspace, conversation=conv, branch=fork, floor_no=3, role="user", content={"x": 1})

    store = mm.MemoryStore.objects.create(workspace=workspace, name="notes", metadata={"team": "a"})
    mm.ConversationResource.objects.create(conversation=conv, memory_store=store, instructions="use it", position=0)
    job = mm.MemoryJob.objects.create(
        workspace=workspace, kind="extract", scope="chat", scope_id=conv.external_id, status="succeeded",
        attempts=1, payload={"message_ids": [messages[0].pk], "store": store.pk}, result={"created": 2},
        started_at=timezone.now(), finished_at=timezone.now(),
    )
    fact = _item(workspace, content="likes tea", actor=Actor.for_job(job.pk), scope="chat", scope_id=conv.external_id,
                 type="fact", fact_key="drink", source_job=job, source_message_id=messages[0].pk, importance=0.7)
    doc = _item(workspace, content="# v1 secret plan", actor=actor, scope="store", scope_id=store.pk,
                type="document", store=store, path="/notes/plan.md", expires_at=timezone.now() + timedelta(days=1))
    first_version = doc.current_version_id
    _modify(doc, "# v2 public plan", actor)
    memory_version_redact(workspace=workspace, version_id=first_version, actor=Actor.for_user(7))
    mm.MemoryEdge.objects.create(workspace=workspace, from_item=doc, to_item=fact, relation="supports")
    mm.ScopeState.objects.create(
        workspace=workspace, scope="chat", scope_id=conv.external_id, conversation=conv, last_processed_floor_no=3,
        item_count=1, last_extracted_at=timezone.now(),
    )
    session = fm.AgentSession.objects.create(
        workspace=workspace, conversation=conv, project_key="/proj", session_id="sess-1", mtime_ms=1, summary={"a": 1}
    )
    fm.SessionEntry.objects.create(session=session, uuid="e1", entry='{"type":"user"}', message=messages[0], mtime_ms=2)
    fm.SessionEntry.objects.create(session=session, subpath="sub", entry='{"type":"x"}', mtime_ms=3)
    fm.Checkpoint.objects.create(
        workspace=workspace, conversation=conv, checkpoint_id="cp1", type="msgpack", checkpoint=b"\x00\xff\x80bin",
        metadata={"step": 1},
    )
    fm.CheckpointWrite.objects.create(
        workspace=workspace, conversation=conv, checkpoint_id="cp1", task_id="t", idx=0, channel="c", type="json",
        value=b"\x01\x02",
    )
    fm.StoreDocumentTTL.objects.create(memory=doc, ttl_minutes=60.0)
    return {"keys": keys, "conv": conv, "doc": doc, "fact": fact, "redacted": first_version, "job": job}


def _snapshot(workspace_id: str) -> dict[str, list[dict]]:
    workspace = Workspace.objects.get(pk=workspace_id)
    snap = {"workspace": [backup._row(workspace)]}
    for model, lookup in backup.workspace_models():
        snap[model._meta.label_lower] = [
            backup._row(obj) for obj in model._base_manager.filter(**{lookup: workspace_id}).order_by("pk")
        ]
    return snap


def _export(ref: str) -> str:
    out = io.StringIO()
    backup.workspace_export(workspace_ref=ref, out=out)
    return out.getvalue()


def test_every_table_with_a_workspace_key_is_exported():
    covered = {model for model, _ in backup.workspace_models()}
    for model in apps.get_models(include_auto_created=True):
        if model._meta.proxy or model is Workspace or model._meta.label_lower in backup.NOT_EXPORTED:
            continue
        for f in model._meta.concrete_fields:
            if f.is_relation and (f.related_model is Workspace or f.related_model in covered):
                assert model in covered, f"{model._meta.label} refers to a workspace table but is not exported"


def test_the_fixture_fills_every_exported_table(populated, workspace):
    counts = {label: len(rows) for label, rows in _snapshot(workspace.pk).items()}
    empty = [label for label, n in counts.items() if n == 0]
    assert not empty, f"add rows of {empty} to the round-trip fixture so their export is tested"


def test_restore_round_trips_exactly(populated, workspace):
    before = _snapshot(workspace.pk)
    text = _export("acme")
    assert populated["keys"]["live"].raw_key not in text
    assert populated["keys"]["live"].api_key.key_hash in text
    assert "secret plan" not in text  # redacted for good, and stays so

    Workspace.objects.filter(pk=workspace.pk).delete()
    assert not mm.MemoryVersion.objects.filter(workspace_id=workspace.pk).exists()
    result = backup.workspace_import(lines=io.StringIO(text))
    assert result.workspace.pk == workspace.pk

    assert _snapshot(workspace.pk) == before
    assert _export("acme") == text
    # The restored key still works with the secret the agent already holds.
    restored = api_key_authenticate(raw_key=populated["keys"]["live"].raw_key)
    assert restored is not None and restored.workspace_id == workspace.pk
    redacted = mm.MemoryVersion.objects.get(pk=populated["redacted"])
    assert redacted.redacted_at is not None and redacted.content is None and redacted.path is None


def test_restore_refuses_an_existing_workspace(populated, workspace):
    text = _export("acme")
    with pytest.raises(ConflictError):
        backup.workspace_import(lines=io.StringIO(text))


def test_copy_into_a_new_slug_reissues_every_id(populated, workspace):
    before = _snapshot(workspace.pk)
    result = backup.workspace_import(lines=io.StringIO(_export("acme")), into="acme-copy", name="Acme copy")
    copy = result.workspace
    assert copy.pk != workspace.pk and copy.slug == "acme-copy" and copy.name == "Acme copy"
    assert _snapshot(workspace.pk) == before  # the original is untouched
    assert result.skipped == {"accounts.apikey": 3}
    assert not ApiKey.objects.filter(workspace=copy).exists()

    after = _snapshot(copy.pk)
    for label, rows in before.items():
        if label in ("workspace", "accounts.apikey"):
            continue
        assert len(after[label]) == len(rows), label
        old_pks = {r["pk"] for r in rows}
        if isinstance(next(iter(old_pks), None), str):
            assert old_pks.isdisjoint({r["pk"] for r in after[label]}), label

    conv = cm.Conversation.objects.get(workspace=copy)
    assert conv.external_id == "会话-1"
    assert set(cm.Branch.objects.filter(conversation=conv).values_list("name", flat=True)) == {"main", "alt"}
    fork = cm.Branch.objects.get(conversation=conv, name="alt")
    assert fork.parent.conversation_id == conv.pk
    assert cm.Message.objects.get(pk=fork.fork_message_id).conversation_id == conv.pk
    for message in cm.Message.objects.filter(conversation=conv):
        assert message.branch.conversation_id == conv.pk and message.workspace_id == copy.pk

    doc = mm.MemoryItem.objects.get(workspace=copy, type="document")
    assert doc.content == "# v2 public plan" and doc.store.workspace_id == copy.pk and doc.scope_id == doc.store_id
    versions = mm.MemoryVersion.objects.filter(workspace=copy, memory_id=doc.pk).order_by("version")
    assert [v.version for v in versions] == [1, 2]
    assert versions[0].redacted_at is not None and versions[0].content is None
    assert doc.current_version_id == versions[1].pk
    job = mm.MemoryJob.objects.get(workspace=copy)
    message_ids = set(cm.Message.objects.filter(conversation=conv).values_list("pk", flat=True))
    assert set(job.payload["message_ids"]) <= message_ids and job.payload["store"] == doc.store_id
    fact = mm.MemoryItem.objects.get(workspace=copy, type="fact")
    assert fact.source_job_id == job.pk and fact.source_message_id in message_ids
    edge = mm.MemoryEdge.objects.get(workspace=copy)
    assert (edge.from_item_id, edge.to_item_id) == (doc.pk, fact.pk)
    assert fm.StoreDocumentTTL.objects.get(memory=doc).ttl_minutes == 60.0
    session = fm.AgentSession.objects.get(workspace=copy)
    entries = list(fm.SessionEntry.objects.filter(session=session).order_by("pk"))
    assert [e.entry for e in entries] == ['{"type":"user"}', '{"type":"x"}']
    assert entries[0].message.conversation_id == conv.pk
    assert bytes(fm.Checkpoint.objects.get(workspace=copy).checkpoint) == b"\x00\xff\x80bin"


def test_truncated_file_imports_nothing(populated, workspace):
    lines = _export("acme").splitlines(keepends=True)
    Workspace.objects.filter(pk=workspace.pk).delete()
    for cut in (lines[:-1], lines[:-5]):
        with pytest.raises(ValidationError):
            backup.workspace_import(lines=iter(cut))
        assert not Workspace.objects.filter(pk=workspace.pk).exists()
        assert not cm.Message.objects.exists()


def test_a_row_pointing_into_another_workspace_is_refused(populated, workspace):
    intruder = WorkspaceFactory(slug="intruder")
    victim_conv = cm.Conversation.objects.create(workspace=intruder, external_id="theirs")
    lines = _export("acme").splitlines(keepends=True)
    Workspace.objects.filter(pk=workspace.pk).delete()
    for index, line in enumerate(lines):
        row = json.loads(line)
        if row.get("model") == "conversations.message":
            row["fields"]["conversation_id"] = victim_conv.pk
            lines[index] = json.dumps(row) + "\n"
            break
    with pytest.raises(ValidationError):
        backup.workspace_import(lines=iter(lines))
    assert cm.Message.objects.filter(conversation=victim_conv).count() == 0
    assert not Workspace.objects.filter(pk=workspace.pk).exists()

    # A row claiming another workspace outright is refused as well.
    lines = _export("intruder").splitlines(keepends=True)
    row = json.loads(lines[1])
    row["fields"]["workspace_id"] = "ws_someoneelse"
    lines[1] = json.dumps(row) + "\n"
    with pytest.raises(ValidationError):
        backup.workspace_import(lines=iter(lines), into="intruder-copy")
    assert not Workspace.objects.filter(slug="intruder-copy").exists()


def test_commands_round_trip_with_progress_on_stderr(populated, workspace, tmp_path, capsys):
    target = tmp_path / "acme.jsonl"
    call_command("export_workspace", "acme", "--output", str(target))
    err = capsys.readouterr().err
    assert "export" in err and "row" in err  # the tqdm bar
    assert not (tmp_path / "acme.jsonl.partial").exists()
    header = json.loads(target.read_text().splitlines()[0])
    assert header["counts"]["conversations.message"] == 4

    call_command("import_workspace", str(target), "--into", "acme-2")
    captured = capsys.readouterr()
    assert captured.out.strip().endswith("acme-2")
    assert "import" in captured.err
    assert cm.Message.objects.filter(workspace__slug="acme-2").count() == 4

    with pytest.raises(CommandError):
        call_command("import_workspace", str(target), "--into", "acme-2")
    with pytest.raises(CommandError):
        call_command("export_workspace", "nope", "--output", str(tmp_path / "x.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hello": 1}\n')
    with pytest.raises(CommandError):
        call_command("import_workspace", str(bad))


@pytest.mark.django_db(transaction=True)
def test_export_in_its_own_snapshot_transaction(tmp_path):
    """Outside any transaction the export opens its own (repeatable read on
    PostgreSQL) and the round trip still holds."""
    ws = WorkspaceFactory(slug="snap")
    conv = cm.Conversation.objects.create(workspace=ws, external_id="c")
    branch = cm.Branch.objects.create(conversation=conv)
    cm.Message.objects.create(workspace=ws, conversation=conv, branch=branch, floor_no=1, role="user", content="hi")
    before = _snapshot(ws.pk)
    target = tmp_path / "snap.jsonl"
    call_command("export_workspace", "snap", "--output", str(target), "--no-progress")
    ws.delete()
    call_command("import_workspace", str(target), "--no-progress")
    assert _snapshot(before["workspace"][0]["pk"]) == before


def test_operator_memberships_stay_with_the_installation(workspace, django_user_model):
    from accounts.services import workspace_membership_add

    operator = django_user_model.objects.create_user("operator", password="x", is_staff=True)
    workspace_membership_add(user=operator, workspace=workspace)
    assert "workspacemembership" not in _export(workspace.slug)


def test_a_copy_reissues_ids_in_metadata_but_never_rewrites_verbatim_text(workspace):
    """A message that quotes one of the workspace's own ids keeps its words
    in a copy (the registry marks `content` verbatim), while the same id in
    its metadata is re-issued with the row it names."""
    from conversations.services import message_append

    first = message_append(workspace=workspace, external_id="ids", role="user", content="Hello.").message
    quoted = message_append(workspace=workspace, external_id="ids", role="user",
                            content=f"Please look at {first.pk} again.", metadata={"see": first.pk}).message
    copy = backup.workspace_import(lines=io.StringIO(_export(workspace.slug)), into="ids-copy").workspace
    new_first, copied = cm.Message.objects.filter(workspace=copy).order_by("floor_no")
    assert copied.content == quoted.content
    assert copied.metadata == {"see": new_first.pk} and new_first.pk != first.pk
