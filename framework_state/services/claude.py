"""Claude Agent SDK session stores: transcripts mirrored into conversations.

A session key `(project_key, session_id)` owns one conversation; its main
transcript and each subpath (`subagents/agent-<id>`) are separate streams of
entries kept verbatim. User and assistant lines of the main transcript also
become messages of the conversation, so the API and the admin show them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from accounts.models import Workspace
from conversations.models import MAX_CONVERSATION_ID_BYTES, FrameworkSource, Message
from conversations.services import (
    NewMessage,
    conversation_delete,
    conversation_get_or_create,
    messages_append,
    new_message,
)
from framework_state.models import AgentSession, SessionEntry
from framework_state.services.common import clean_list, clean_text, now_ms
from memory_project.db import insert_objects
from memory_project.erasure import erasure_on_disk
from memory_project.errors import ConflictError, PreconditionFailedError, ValidationError

MAX_PROJECT_KEY_BYTES = 1024
MAX_SESSION_ID_BYTES = 256
MAX_SUBPATH_BYTES = 512
MAX_UUID_CHARS = 128
# One SDK flush holds at most ~500 entries (its batching threshold); leave room.
MAX_ENTRIES_PER_APPEND = 2000
MIRRORED_TYPES = frozenset({"user", "assistant"})


@dataclass(frozen=True)
class SessionKey:
    project_key: str
    session_id: str
    subpath: str = ""  # "" = the main transcript


def clean_key(*, project_key: Any, session_id: Any, subpath: Any = None) -> SessionKey:
    project_key = clean_text(project_key, field="project_key", max_bytes=MAX_PROJECT_KEY_BYTES)
    session_id = clean_text(session_id, field="session_id", max_bytes=MAX_SESSION_ID_BYTES)
    if subpath is None:
        return SessionKey(project_key, session_id)
    # "" would be indistinguishable from the main transcript: the SDK calls it invalid too.
    subpath = clean_text(subpath, field="subpath", max_bytes=MAX_SUBPATH_BYTES)
    return SessionKey(project_key, session_id, subpath)


def _escape(part: str) -> str:
    # `:` separates the parts, `%` escapes, `/` cannot travel in a URL segment.
    return part.replace("%", "%25").replace(":", "%3A").replace("/", "%2F")


def digest_conversation_id(project_key: str, session_id: str) -> str:
    digest = hashlib.sha256(f"{project_key}\x00{session_id}".encode()).hexdigest()[:40]
    return f"claude:{digest}"


def conversation_id_for(project_key: str, session_id: str) -> str:
    """The conversation id of a new session: readable when it fits the id
    rules, else a digest. One id per key: each part is escaped, so project `a:b`
    with session `c` (`claude:a%3Ab:c`) and project `a` with session `b:c`
    (`claude:a:b%3Ac`) differ, and a readable id (two colons) is never a digest
    (one colon)."""
    readable = f"claude:{_escape(project_key)}:{_escape(session_id)}"
    if len(readable.encode("utf-8")) <= MAX_CONVERSATION_ID_BYTES and not any(
        ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in readable
    ):
        return readable
    return digest_conversation_id(project_key, session_id)


def _clean_entries(entries: Any) -> list[tuple[dict[str, Any], str, str | None]]:
    """(entry, its JSON text, its uuid) for each entry."""
    cleaned = []
    for index, entry in enumerate(clean_list(entries, field="entries", max_items=MAX_ENTRIES_PER_APPEND)):
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise ValidationError(f"entries[{index}]: must be an object with a string 'type'.")
        uuid = entry.get("uuid")
        if uuid is not None and (not isinstance(uuid, str) or not uuid or len(uuid) > MAX_UUID_CHARS):
            raise ValidationError(f"entries[{index}].uuid: must be a string of 1 to {MAX_UUID_CHARS} characters.")
        try:
            text = json.dumps(entry, ensure_ascii=False, allow_nan=False)
        except ValueError as exc:
            raise ValidationError(f"entries[{index}]: not representable as JSON ({exc}).")
        cleaned.append((entry, text, uuid))
    return cleaned


def _strip_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {_strip_nul(k): _strip_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_nul(v) for v in value]
    return value


def _mirrored_message(entry: dict[str, Any]) -> tuple[str, Any] | None:
    """(role, content) of a transcript line that is a conversation message."""
    if entry.get("type") not in MIRRORED_TYPES:
        return None
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, bool) or not isinstance(content, (str, list, dict)):
        return None
    return entry["type"], _strip_nul(content)


def _locked_session(*, workspace: Workspace, key: SessionKey) -> AgentSession | None:
    return (
        AgentSession.objects.select_for_update()
        .filter(workspace=workspace, project_key=key.project_key, session_id=key.session_id)
        .select_related("conversation")
        .first()
    )


def _serialize_first_append(*, workspace: Workspace, key: SessionKey) -> None:
    """Make the first appends of one session key wait for each other, holding
    no other lock: a transaction-scoped advisory lock on PostgreSQL (SQLite's
    IMMEDIATE transactions already run one writer at a time).

    Letting them race instead deadlocked: the loser of the session insert held
    the conversation's row lock and waited for the session's, while the winner
    held the session's and waited for the conversation's to append."""
    if connection.vendor != "postgresql":
        return
    seed = f"claude-session\x00{workspace.pk}\x00{key.project_key}\x00{key.session_id}".encode()
    lock_id = int.from_bytes(hashlib.sha256(seed).digest()[:8], "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [lock_id])


def _new_session_conversation(*, workspace: Workspace, key: SessionKey):
    """A conversation created for this session, never one that already existed
    (a conversation made through the API is not adopted: deleting the session
    would delete its messages). When the session's id is taken, its digest id
    is used; when both are, 409."""
    tried = []
    for external_id in dict.fromkeys(
        [conversation_id_for(key.project_key, key.session_id), digest_conversation_id(key.project_key, key.session_id)]
    ):
        conversation, created = conversation_get_or_create(
            workspace=workspace, external_id=external_id, source=FrameworkSource.CLAUDE_AGENT_SDK
        )
        if created:
            return conversation
        tried.append(external_id)
    raise ConflictError(
        f"Conversations {' and '.join(repr(t) for t in tried)} exist and belong to no session of this key; "
        "rename or delete them to store this session."
    )


def _lock_or_create_session(*, workspace: Workspace, key: SessionKey) -> AgentSession:
    """The locked session row, created with its conversation when missing. Call inside a transaction."""
    session = _locked_session(workspace=workspace, key=key)
    if session is not None:
        return session
    _serialize_first_append(workspace=workspace, key=key)
    # Created while this transaction waited? (A new statement sees its commit.)
    session = _locked_session(workspace=workspace, key=key)
    if session is not None:
        return session
    conversation = _new_session_conversation(workspace=workspace, key=key)
    return AgentSession.objects.create(
        workspace=workspace, conversation=conversation, project_key=key.project_key, session_id=key.session_id
    )


@dataclass(frozen=True)
class AppendOutcome:
    appended: int
    mtime: int
    summary: dict[str, Any] | None
    summary_version: int


def session_entries_append(
    *,
    workspace: Workspace,
    key: SessionKey,
    entries: Any,
    summary_data: Any = None,
    expected_summary_version: Any = None,
) -> AppendOutcome:
    """Append entries to one stream in call order; a repeated `uuid` in the stream is ignored.

    For the main transcript the caller may send the summary sidecar it folded
    (`summary_data`, the SDK's opaque `data`) with the `summary_version` it
    folded from: a stale version is a 409 and nothing is written, so the caller
    re-reads and folds again. The summary and the session's `mtime` are stamped
    with the same storage time.
    """
    cleaned = _clean_entries(entries)
    if summary_data is not None:
        if key.subpath:
            raise ValidationError("summary: only the main transcript has a summary.")
        if not isinstance(summary_data, dict):
            raise ValidationError("summary.data: must be an object.")
        if isinstance(expected_summary_version, bool) or not isinstance(expected_summary_version, int):
            raise ValidationError("summary.expected_version: must be an integer.")
    if not cleaned:
        return _outcome_for(workspace=workspace, key=key, appended=0)

    with transaction.atomic():
        session = _lock_or_create_session(workspace=workspace, key=key)
        if summary_data is not None and expected_summary_version != session.summary_version:
            raise PreconditionFailedError(
                f"summary.expected_version {expected_summary_version} is stale; the current version is "
                f"{session.summary_version}."
            )
        uuids = [uuid for _, _, uuid in cleaned if uuid is not None]
        seen = set(
            SessionEntry.objects.filter(session=session, subpath=key.subpath, uuid__in=uuids).values_list(
                "uuid", flat=True
            )
        ) if uuids else set()
        mtime = max(now_ms(), session.mtime_ms + 1)
        rows = []
        mirrored_rows: list[SessionEntry] = []
        mirrored_messages: list[NewMessage] = []
        for entry, text, uuid in cleaned:
            if uuid is not None:
                if uuid in seen:
                    continue
                seen.add(uuid)
            row = SessionEntry(session=session, subpath=key.subpath, uuid=uuid, entry=text, mtime_ms=mtime)
            rows.append(row)
            mirrored = None if key.subpath else _mirrored_message(entry)
            if mirrored is not None:
                role, content = mirrored
                mirrored_rows.append(row)
                mirrored_messages.append(
                    new_message(
                        role=role,
                        content=content,
                        metadata={"claude_entry_uuid": uuid, "claude_entry_type": entry["type"]},
                        prefix=f"entries[{uuid or len(rows) - 1}].message.",
                    )
                )
        if mirrored_messages:
            # The transcript's user and assistant lines become messages in one
            # batch append (one INSERT), in transcript order.
            appended = messages_append(
                workspace=workspace,
                external_id=session.conversation.external_id,
                messages=mirrored_messages,
                source=FrameworkSource.CLAUDE_AGENT_SDK,
                max_messages=MAX_ENTRIES_PER_APPEND,
            ).messages
            for row, message in zip(mirrored_rows, appended, strict=True):
                row.message = message
        insert_objects(rows)
        fields = []
        if not key.subpath:
            session.mtime_ms = mtime
            fields.append("mtime_ms")
        if summary_data is not None:
            session.summary = {"session_id": key.session_id, "mtime": mtime, "data": summary_data}
            session.summary_mtime_ms = mtime
            session.summary_version += 1
            fields += ["summary", "summary_mtime_ms", "summary_version"]
        if fields:
            session.save(update_fields=fields)
    return AppendOutcome(
        appended=len(rows), mtime=mtime, summary=session.summary, summary_version=session.summary_version
    )


def _outcome_for(*, workspace: Workspace, key: SessionKey, appended: int) -> AppendOutcome:
    session = AgentSession.objects.filter(
        workspace=workspace, project_key=key.project_key, session_id=key.session_id
    ).first()
    if session is None:
        return AppendOutcome(appended=appended, mtime=0, summary=None, summary_version=0)
    return AppendOutcome(
        appended=appended, mtime=session.mtime_ms, summary=session.summary, summary_version=session.summary_version
    )


def session_key_delete(*, workspace: Workspace, key: SessionKey) -> None:
    """Delete a stream. The main key takes the whole session with it (its
    subpaths, its summary and its conversation); a missing key is a no-op."""
    with transaction.atomic():
        session = (
            AgentSession.objects.select_for_update()
            .filter(workspace=workspace, project_key=key.project_key, session_id=key.session_id)
            .select_related("conversation")
            .first()
        )
        if session is None:
            return
        if key.subpath:
            SessionEntry.objects.filter(session=session, subpath=key.subpath).delete()
            erasure_on_disk([SessionEntry._meta.db_table])
            return
        conversation_delete(workspace=workspace, external_id=session.conversation.external_id)


def session_entries_note_message_edited(*, event) -> None:
    """Receiver of `message_edited`: a transcript line mirrored as the edited
    message shows its new content, so the old text is not kept in the
    session's copy (a deleted message takes its line with it: the foreign
    key cascades)."""
    if not event.content_changed:
        return
    content = Message.objects.filter(pk=event.message_id).values_list("content", flat=True).first()
    if content is None:
        return
    with transaction.atomic():
        for row in SessionEntry.objects.select_for_update().filter(message_id=event.message_id).only("pk", "entry"):
            entry = json.loads(row.entry)
            if isinstance(entry.get("message"), dict):
                entry["message"]["content"] = content
                SessionEntry.objects.filter(pk=row.pk).update(entry=json.dumps(entry, ensure_ascii=False))
