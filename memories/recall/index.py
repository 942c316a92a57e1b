"""The recall index: what retrieval can find, kept in step with memories and
messages.

Each entry is a memory item or a passage of a message (see `RecallEntry`),
with its analysed terms and one scope token; the database's own full-text
index over them (`memories.recall.fulltext`) answers "entries of these
scopes that contain any of these terms".

Entries are rebuilt, never patched: a memory is re-indexed when a version is
written (every create, change, restore), a message's passages when the
pipeline reads its floor and whenever the message changes. Deleting a memory
or a conversation cascades to its entries.
"""

# SQL here is built from the module's constant names only; every value that
# comes from a caller is a bound parameter.
# ruff: noqa: S608
from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from django.conf import settings
from django.db import connection as default_connection
from django.db import transaction

from conversations.selectors.messages import message_conversation_ids
from memories.dispatch import recall_embed_send
from memories.llm.tokens import content_text, count_tokens
from memories.models import MemoryItem, MemoryType, Scope, SummaryTier
from memories.recall import pgvector
from memories.recall.analysis import analyze, terms_text
from memories.recall.models import RecallEntry, RecallKind
from memory_project.db import column, insert_rows, placeholders, table

# A passage is a window of whole sentences of one message, at most this many
# tokens (a long message becomes several passages). Small enough that a
# 1,000-token budget holds a dozen or more pieces of evidence; large enough that
# a sentence keeps its neighbours' context. Turns of a chat are mostly shorter.
PASSAGE_MAX_TOKENS = 80
# Every column of an entry but its id and creation time, in the order the
# index's rows are built (entries are written with `insert_rows`, without a
# model object each).
ENTRY_COLUMNS = ("workspace_id", "kind", "scope_token", "memory_id", "conversation_id", "branch_id", "message_id",
                 "floor_no", "start_char", "end_char", "terms", "length", "embedding", "embedding_model",
                 "content_sha256")
# Sentences end at . ! ? (before a space or the end), their CJK forms, or a newline.
_SENTENCE_END_RE = re.compile(r"(?:[.!?](?=\s)|[。！？]|\n+)")


# --- scope tokens --------------------------------------------------------------


def memory_scope_token(workspace_id: str, scope: str, scope_id: str) -> str:
    """One word (letters and digits only, so a full-text tokenizer keeps it
    whole) per memory scope. Floor memories are filed under their
    conversation's business id, the scope they are visible in."""
    digest = hashlib.sha1(f"{workspace_id}\x00{scope}\x00{scope_id}".encode(), usedforsecurity=False).hexdigest()
    return f"{scope[0]}{digest[:32]}"


def passage_scope_token(conversation_pk: int) -> str:
    return f"p{conversation_pk}"


def _floor_conversation_ids(workspace_id: str, message_ids: Iterable[str]) -> dict[str, str]:

    return message_conversation_ids(workspace_id=workspace_id, message_ids=list(message_ids))


# --- memories --------------------------------------------------------------------


def _memory_text(item: MemoryItem) -> str:
    # The fact key's words help a question that names the attribute ("email").
    key = (item.fact_key or "").replace(".", " ").replace("_", " ")
    return f"{key} {item.content}" if key else item.content


def _indexed(item: MemoryItem) -> bool:
    """Store documents have their own search. Macro summaries are not evidence:
    they orient (dual-summary reads them directly) and must not change what
    retrieval finds once micros are compacted into them."""
    return item.type != MemoryType.DOCUMENT and item.summary_tier != SummaryTier.MACRO


def memory_entries_rebuild(items: Sequence[MemoryItem], *, new: bool = False, keep_vectors: bool = False) -> None:
    """(Re)index memory items: one DELETE (none for items just created,
    `new=True`) and one multi-row INSERT. Store documents are not part of a
    conversation's recall; they have their own search. With `keep_vectors`,
    an entry whose memory's content is unchanged keeps its vector (a
    reindex must not leave the workspace to words alone). Entries left
    without a vector are embedded after commit (`embedding_queue`). Called
    inside the writing transaction."""
    items = [item for item in items if _indexed(item)]
    if not items:
        return
    vectors: dict[str, tuple[str, bytes, str]] = {}
    if not new:
        old = RecallEntry.objects.filter(memory_id__in=[item.pk for item in items])
        if keep_vectors and not _vector_column():
            vectors = {memory_id: (sha, vector, model) for memory_id, sha, vector, model in old.filter(
                embedding__isnull=False).values_list("memory_id", "content_sha256", "embedding", "embedding_model")}
        old.delete()
    floors = _floor_conversation_ids(items[0].workspace_id,
                                     [i.scope_id for i in items if i.scope == Scope.FLOOR])
    rows = []
    for item in items:
        if not item.content:
            continue
        if item.scope == Scope.FLOOR:
            conversation_id = floors.get(item.scope_id)
            if conversation_id is None:
                continue  # a floor of no conversation of this workspace: visible nowhere
            token = memory_scope_token(item.workspace_id, Scope.FLOOR, conversation_id)
        else:
            token = memory_scope_token(item.workspace_id, item.scope, item.scope_id)
        terms = analyze(_memory_text(item))
        sha, vector, model = vectors.get(item.pk, ("", None, ""))
        if sha != item.content_sha256:
            vector, model = None, ""
        rows.append((item.workspace_id, RecallKind.MEMORY, token, item.pk, None, None, None, None, 0, 0,
                     terms_text(terms), len(terms), vector, model, item.content_sha256))
    insert_rows(RecallEntry, ENTRY_COLUMNS, rows)
    if any(row[12] is None for row in rows):
        embedding_queue(items[0].workspace_id)


def memory_entries_sync(items: Sequence[MemoryItem]) -> None:
    """Rebuild the entries of the items whose text or scope changed since
    they were indexed; a status-only change keeps its entry (and vector)."""
    items = [item for item in items if _indexed(item)]
    if not items:
        return
    indexed = {memory_id: (sha, token) for memory_id, sha, token in RecallEntry.objects.filter(
        memory_id__in=[item.pk for item in items]).values_list("memory_id", "content_sha256", "scope_token")}
    stale = [item for item in items if item.pk not in indexed or indexed[item.pk][0] != item.content_sha256
             or (item.scope != Scope.FLOOR
                 and indexed[item.pk][1] != memory_scope_token(item.workspace_id, item.scope, item.scope_id))]
    memory_entries_rebuild(stale)


# --- passages --------------------------------------------------------------------


@dataclass(frozen=True)
class PassageSpan:
    start: int
    end: int


def passage_spans(text: str, max_tokens: int = PASSAGE_MAX_TOKENS) -> list[PassageSpan]:
    """Windows of whole sentences of `text`, each at most `max_tokens` tokens
    (a single longer sentence is a window of its own)."""
    sentences: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END_RE.finditer(text):
        end = match.end()
        if text[start:end].strip():
            sentences.append((start, end))
        start = end
    if text[start:].strip():
        sentences.append((start, len(text)))
    spans: list[PassageSpan] = []
    window_start: int | None = None
    window_end = 0
    used = 0
    # A token is at least one byte: a text of no more bytes than the cap is
    # one window, whatever its sentences count (most chat turns are).
    if sentences and len(text.encode()) <= max_tokens:
        spans.append(PassageSpan(sentences[0][0], sentences[-1][1]))
        sentences = []
    for s_start, s_end in sentences:
        tokens = count_tokens(text[s_start:s_end])
        if window_start is not None and used + tokens > max_tokens:
            spans.append(PassageSpan(window_start, window_end))
            window_start, used = None, 0
        if window_start is None:
            window_start = s_start
        window_end = s_end
        used += tokens
    if window_start is not None:
        spans.append(PassageSpan(window_start, window_end))
    # Trim surrounding white space so offsets point at text.
    out = []
    for span in spans:
        chunk = text[span.start:span.end]
        lead = len(chunk) - len(chunk.lstrip())
        trail = len(chunk) - len(chunk.rstrip())
        out.append(PassageSpan(span.start + lead, span.end - trail))
    return out


class IndexedMessage(Protocol):
    """What passage indexing reads of a message (conversations' `Message`
    fits; a `MessageRow` too, its conversation given beside it)."""

    pk: str
    conversation_id: int
    branch_id: str
    floor_no: int
    role: str
    content: object
    created_at: datetime


def passage_entries_rebuild(*, workspace_id: str, messages: Sequence[IndexedMessage],
                            conversation_id: int | None = None, keep_vectors: bool = False) -> int:
    """(Re)index the passages of these messages: one DELETE, one multi-row
    INSERT. System and tool messages are not conversation content. With
    `conversation_id`, every message is of that conversation (rows read
    without it, such as `MessageRow`s, need not carry it). With
    `keep_vectors`, a passage whose span and analysed text are unchanged
    keeps its vector. Passages are embedded after commit (`embedding_queue`)."""
    if not messages:
        return 0
    vectors: dict[tuple[str, int, int], tuple[str, bytes, str]] = {}
    if keep_vectors and not _vector_column():
        vectors = {(message_id, start, end): (terms, vector, model)
                   for message_id, start, end, terms, vector, model in RecallEntry.objects.filter(
                       workspace_id=workspace_id, kind=RecallKind.PASSAGE, message_id__in=[m.pk for m in messages],
                       embedding__isnull=False).values_list("message_id", "start_char", "end_char", "terms",
                                                            "embedding", "embedding_model")}
    passage_entries_delete(workspace_id=workspace_id, message_ids=[m.pk for m in messages])
    added = passage_entries_add(workspace_id=workspace_id, messages=messages, conversation_id=conversation_id,
                                vectors=vectors)
    if added:
        embedding_queue(workspace_id)
    return added


def passages_note_appended(*, event) -> None:
    """Receiver of `conversations.hooks.messages_appended` (after the append
    commits): the new messages' passages, in one INSERT (nothing of theirs
    can be indexed yet). Their vectors come with the pipeline's."""
    passage_entries_add(workspace_id=event.workspace_id, messages=event.messages,
                        conversation_id=event.conversation_id)


def passage_entries_add(*, workspace_id: str, messages: Sequence[IndexedMessage],
                        conversation_id: int | None = None,
                        vectors: dict[tuple[str, int, int], tuple[str, bytes, str]] | None = None) -> int:
    """Index the passages of messages that have none: one multi-row INSERT.
    `vectors`: kept vectors by (message id, start, end), with the analysed
    text they were made from (see `passage_entries_rebuild`)."""
    vectors = vectors or {}
    rows = []
    for message in messages:
        if message.role not in {"user", "assistant"}:
            continue
        text = content_text(message.content)
        for span in passage_spans(text):
            terms = analyze(text[span.start:span.end])
            if not terms:
                continue
            of = message.conversation_id if conversation_id is None else conversation_id
            text_terms = terms_text(terms)
            kept, vector, model = vectors.get((message.pk, span.start, span.end), ("", None, ""))
            if kept != text_terms:
                vector, model = None, ""
            rows.append((workspace_id, RecallKind.PASSAGE, passage_scope_token(of), None, of, message.branch_id,
                         message.pk, message.floor_no, span.start, span.end, text_terms, len(terms), vector,
                         model, ""))
    return insert_rows(RecallEntry, ENTRY_COLUMNS, rows)


def _vector_column() -> bool:
    """Whether entries carry a pgvector column too: a kept vector would need
    it written as well, so there vectors are embedded again instead."""
    return pgvector.has_column()


def embedding_queue(workspace_id: str) -> None:
    """Queue the embedding of the workspace's entries without a vector once
    the writing transaction commits: once per workspace and transaction,
    whatever wrote the entries (REST, MCP, agent tools, stores, the pipeline,
    a reindex, an import). Nothing is queued while embeddings are off."""
    if settings.EMBEDDING_PROVIDER == "none":
        return
    connection = transaction.get_connection()
    # Queued already by this transaction: a callback registered under
    # savepoints that are all still open (one of a savepoint released or
    # rolled back belongs to a block that is over).
    open_savepoints = set(connection.savepoint_ids)
    if any(getattr(callback, "embeds_workspace", None) == workspace_id and set(sids) <= open_savepoints
           for sids, callback, *_rest in connection.run_on_commit):
        return

    def embed() -> None:
        recall_embed_send(workspace_id)

    embed.embeds_workspace = workspace_id
    transaction.on_commit(embed)


def passage_entries_delete(*, workspace_id: str, message_ids: Iterable[str]) -> int:
    """The messages' passages gone, in one DELETE written by hand so that it
    needs no answer: inside the pipeline's statement pipeline it travels
    with the batch's writes (the ORM's delete reads its row count back).
    Returns the number deleted (unknown, -1, inside a statement pipeline).
    Nothing refers to an entry."""
    ids = list(message_ids)
    if not ids:
        return 0
    with _passages_of(workspace_id, ids) as (cursor, where, params):
        cursor.execute(f"DELETE FROM {table(RecallEntry)} WHERE {where}", params)  # noqa: S608
        return cursor.rowcount


def passages_indexed(*, workspace_id: str, message_ids: Iterable[str]) -> set[str]:
    """Those of the messages whose passages are in the index: a fork's
    extraction reads its parent's floors too, which are indexed once."""
    ids = list(message_ids)
    if not ids:
        return set()
    with _passages_of(workspace_id, ids) as (cursor, where, params):
        cursor.execute(f"SELECT DISTINCT {column(RecallEntry, 'message_id')} FROM {table(RecallEntry)} "  # noqa: S608
                       f"WHERE {where}", params)
        return {row[0] for row in cursor.fetchall()}


@contextlib.contextmanager
def _passages_of(workspace_id: str, ids: list[str]) -> Iterator[tuple[Any, str, list[Any]]]:
    """A cursor, and the condition with its parameters that finds these
    messages' passages through the message's index, on both databases."""
    entry = RecallEntry
    workspace, kind, message = column(entry, "workspace"), column(entry, "kind"), column(entry, "message_id")
    if default_connection.vendor == "postgresql":
        # The ids as one array parameter: the statement's text is the same
        # for every batch, so psycopg converts it once (with a batch's 50 ids
        # written into it, that conversion was a few percent of an
        # extraction); the message's index serves it.
        with default_connection.cursor() as cursor:
            yield cursor, f"{workspace} = %s AND {kind} = %s AND {message} = ANY(%s)", \
                [workspace_id, RecallKind.PASSAGE.value, ids]
        return
    # SQLite, without statistics on the table (a new database has none),
    # took the workspace's index for "workspace = ? AND message_id IN (...)"
    # and read every entry of the workspace to find a batch's passages
    # (3 ms a batch at 10,000 floors, growing with the workspace). A unary
    # plus makes the other columns expressions no index serves: the
    # message's index finds a few rows.
    with default_connection.cursor() as cursor:
        yield cursor, f"+{workspace} = %s AND +{kind} = %s AND {message} IN ({placeholders(len(ids))})", \
            [workspace_id, RecallKind.PASSAGE, *ids]
