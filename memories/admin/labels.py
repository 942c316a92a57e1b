"""Names people read in the console, resolved for a whole page at once.

Scopes are stored as machine ids (`["support:u1:c2","main"]`, `msg_01...`) and
actors as key, user and job ids; an operator reads "branch main of
support:u1:c2", "floor 12 of support:u1:c2", "API key travel-agent",
"operator alice", "extract job". Each resolver costs one query per kind of
id on the page, whatever its length.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from accounts.models import ApiKey
from conversations.selectors.references import conversation_pks, message_labels
from memories.models import MemoryJob

# Conversation ids may be up to 256 bytes; lists show the head and the full id
# as a tooltip.
SHORT_ID_CHARS = 24
# An id kept on one line in a narrow list column (`id_token`).
TOKEN_CHARS = 20
# How much of a source message the review queue reads and shows.
TEXT_HEAD_CHARS = 2000
PREVIEW_CHARS = 280


def short(text: str, limit: int = SHORT_ID_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_branch_scope(scope_id: str) -> tuple[str, str] | None:
    """(conversation id, branch name) of a branch scope id, or None."""
    try:
        value = json.loads(scope_id)
    except (TypeError, ValueError):
        return None
    if isinstance(value, list) and len(value) == 2 and all(isinstance(part, str) for part in value):
        return value[0], value[1]
    return None


def scope_text(scope: str | None, scope_id: str) -> str:
    """A scope as words, without lookups (for titles and messages)."""
    if not scope:
        return "—"
    if scope == "chat":
        return f"conversation {scope_id}"
    if scope == "branch":
        parsed = parse_branch_scope(scope_id)
        return f"branch {parsed[1]} of {parsed[0]}" if parsed else f"branch {scope_id}"
    if scope == "floor":
        return f"floor {scope_id}"
    if scope == "user":
        return f"user {scope_id}"
    return scope


def id_token(value: str, limit: int = TOKEN_CHARS) -> SafeString:
    """An id that never wraps mid-token: its head (the tail of a ULID tells
    ids apart, the head of a conversation id names it) on one line, the
    whole id as the tooltip."""
    return format_html('<span class="id-token" title="{}">{}</span>', value, short(value, limit))


def scope_label_html(scope: str | None, scope_id: str) -> SafeString:
    """`scope_text` with each id kept whole on its line: "branch main of
    <support-ticket-2026-11-…>"."""
    if scope == "chat":
        return format_html("conversation {}", id_token(scope_id))
    if scope == "branch":
        parsed = parse_branch_scope(scope_id)
        if parsed:
            return format_html("branch {} of {}", id_token(parsed[1], 16), id_token(parsed[0]))
    if scope in ("floor", "user"):
        return format_html("{} {}", scope, id_token(scope_id))
    return format_html("{}", scope_text(scope, scope_id))


@dataclass(frozen=True)
class FloorRef:
    conversation_pk: int
    conversation_id: str
    branch_id: str
    branch_name: str
    floor_no: int
    role: str = ""
    text: str = ""

    @property
    def url(self) -> str:
        base = reverse("admin:conversations_conversation_change", args=[self.conversation_pk])
        return f"{base}?branch={self.branch_id}&around={self.floor_no}#floor-{self.branch_id}-{self.floor_no}"


class PageRefs:
    """The conversations and floors a page of memories, jobs or scopes names."""

    def __init__(self) -> None:
        self.floors: dict[str, FloorRef] = {}
        self.conversations: dict[tuple[str, str], int] = {}

    @classmethod
    def for_rows(cls, rows: Iterable, *, message_ids: Iterable[str] = (), with_text: bool = False) -> PageRefs:
        """`rows` have `workspace_id`, `scope` and `scope_id` (or `scope_ref`).
        With `with_text`, each floor carries the head of its message's text."""
        refs = cls()
        rows = list(rows)
        wanted_messages = {m for m in message_ids if m}
        wanted_conversations: dict[str, set[str]] = {}
        for row in rows:
            scope, scope_id = row.scope, _scope_id(row)
            if scope == "floor" and scope_id:
                wanted_messages.add(scope_id)
            elif scope == "chat" and scope_id:
                wanted_conversations.setdefault(row.workspace_id, set()).add(scope_id)
            elif scope == "branch":
                parsed = parse_branch_scope(scope_id)
                if parsed:
                    wanted_conversations.setdefault(row.workspace_id, set()).add(parsed[0])
        if wanted_messages:
            # The head of the stored JSON only: a message may hold 50 MB.
            for row in message_labels(message_ids=wanted_messages, head_chars=TEXT_HEAD_CHARS if with_text else None):
                text = message_preview(row[7]) if with_text else ""
                refs.floors[row[0]] = FloorRef(*row[1:7], text=text)
        if wanted_conversations:
            refs.conversations.update(conversation_pks(external_ids=wanted_conversations))
        return refs

    def conversation_url(self, workspace_id: str, external_id: str) -> str | None:
        pk = self.conversations.get((workspace_id, external_id))
        return reverse("admin:conversations_conversation_change", args=[pk]) if pk else None

    def scope_html(self, scope: str | None, scope_id: str, workspace_id: str) -> SafeString:
        """A scope as a short readable label, linked to its conversation when known."""
        if scope == "chat":
            return self._conversation_html("conversation", scope_id, workspace_id, scope_id)
        if scope == "branch":
            parsed = parse_branch_scope(scope_id)
            if parsed:
                return self._conversation_html(f"branch {short(parsed[1], 16)} of", parsed[0], workspace_id, scope_id)
        if scope == "floor":
            floor = self.floors.get(scope_id)
            if floor:
                return format_html(
                    '<a href="{}" title="{}">floor {} of {}</a>',
                    floor.url,
                    f"{floor.conversation_id} / {floor.branch_name}",
                    floor.floor_no,
                    short(floor.conversation_id),
                )
        if scope == "user":
            return format_html('user <span title="{}">{}</span>', scope_id, short(scope_id))
        return format_html('<span title="{}">{}</span>', scope_id, short(scope_text(scope, scope_id)))

    def _conversation_html(self, label: str, conversation_id: str, workspace_id: str, title: str) -> SafeString:
        url = self.conversation_url(workspace_id, conversation_id)
        text = f"{label} {short(conversation_id)}"
        if url:
            return format_html('<a href="{}" title="{}">{}</a>', url, title, text)
        return format_html('<span title="{}">{}</span>', title, text)

    def floor_html(self, message_id: str | None) -> SafeString | None:
        """"support:u1:c2 #12", linked to that floor of the conversation."""
        floor = self.floors.get(message_id or "")
        if floor is None:
            return None
        return format_html(
            '<a href="{}" title="{} · branch {} · floor {} ({})">{} <b>#{}</b></a>',
            floor.url,
            floor.conversation_id,
            floor.branch_name,
            floor.floor_no,
            message_id,
            short(floor.conversation_id),
            floor.floor_no,
        )


def message_preview(raw: str | None, limit: int = PREVIEW_CHARS) -> str:
    """Readable text from the head of a message's stored JSON (a string, or
    content blocks with `text`), which may be cut anywhere."""
    if not raw:
        return ""
    value = None
    # A cut may fall inside an escape (`\u7528`): back off up to its length.
    for head in (raw[: len(raw) - cut] for cut in range(7)):
        for tail in ("", '"', '"}]', '"]'):
            try:
                value = json.loads(head + tail)
                break
            except ValueError:
                continue
        if value is not None:
            break
    if value is None:
        texts = re.findall(r'"text":\s*"((?:[^"\\]|\\.)*)', raw)
        value = [json.loads(f'"{t}"') if t.count("\\") % 2 == 0 else t for t in texts] or raw
    if isinstance(value, list):
        value = " ".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in value)
    elif not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False)
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _scope_id(row) -> str:
    ref = getattr(row, "scope_ref", None)
    if ref is not None:
        return ref
    return row.scope_id or ""


# --- actors -------------------------------------------------------------------


@dataclass
class ActorNames:
    keys: dict[str, str]
    users: dict[int, str]
    jobs: dict[str, str]

    def label(self, obj, prefix: str = "actor") -> str:
        """"API key travel-agent", "operator alice", "extract job", ..."""
        kind = getattr(obj, f"{prefix}_type", None)
        if not kind:
            return ""
        if kind == "user":
            user_id = getattr(obj, f"{prefix}_user_id")
            return f"operator {self.users.get(user_id, f'#{user_id}')}"
        if kind == "api_key":
            key_id = getattr(obj, f"{prefix}_api_key_id")
            return f"API key {self.keys[key_id]}" if key_id in self.keys else f"API key {key_id}"
        if kind == "session":
            session = getattr(obj, f"{prefix}_session_id") or ""
            key_id = getattr(obj, f"{prefix}_api_key_id", None)
            via = f" via key {self.keys[key_id]}" if key_id in self.keys else ""
            return f"session {short(session)}{via}"
        if kind == "job":
            job_id = getattr(obj, f"{prefix}_job_id")
            return f"{self.jobs[job_id]} job" if job_id in self.jobs else f"job {job_id}"
        return kind

    def link(self, obj, prefix: str = "actor") -> SafeString:
        """The label, linked to the job's page for a job actor."""
        text = self.label(obj, prefix)
        if getattr(obj, f"{prefix}_type", None) == "job":
            job_id = getattr(obj, f"{prefix}_job_id")
            if job_id:
                url = reverse("admin:memories_memoryjob_change", args=[quote(job_id)])
                return format_html('<a href="{}" title="{}">{}</a>', url, job_id, text)
        return format_html("{}", text)


def actor_names(rows: Iterable, prefixes: Iterable[str] = ("actor",)) -> ActorNames:
    """Names of the keys, users and jobs the rows' actor columns point at."""
    keys: set[str] = set()
    users: set[int] = set()
    jobs: set[str] = set()
    for row in rows:
        for prefix in prefixes:
            keys.add(getattr(row, f"{prefix}_api_key_id", None))
            users.add(getattr(row, f"{prefix}_user_id", None))
            jobs.add(getattr(row, f"{prefix}_job_id", None))
    keys.discard(None)
    users.discard(None)
    jobs.discard(None)
    model = get_user_model()
    return ActorNames(
        keys=dict(ApiKey.objects.filter(pk__in=keys).values_list("pk", "name")) if keys else {},
        users=dict(model.objects.filter(pk__in=users).values_list("pk", model.USERNAME_FIELD)) if users else {},
        jobs=dict(MemoryJob.objects.filter(pk__in=jobs).values_list("pk", "kind")) if jobs else {},
    )
