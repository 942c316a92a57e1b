"""Reads for the framework adapters, always scoped to a workspace."""

# SQL here is built from model metadata (table and column names, quoted by the
# backend); every value is a bound parameter.
# ruff: noqa: S608
from __future__ import annotations

import base64
import functools
import json
from typing import Any

from django.db import connection
from django.db.models import Q, Subquery

from accounts.models import Workspace
from conversations.models import MAIN_BRANCH, MAX_MESSAGES_PER_CONVERSATION, Conversation
from conversations.statements import page_statements
from framework_state.models import AgentSession, Checkpoint, CheckpointWrite, SessionEntry
from framework_state.services.claude import SessionKey
from framework_state.services.openai import message_to_item
from memory_project.db import column, json_column, table


def _session(*, workspace: Workspace, project_key: str, session_id: str) -> AgentSession | None:
    return AgentSession.objects.filter(workspace=workspace, project_key=project_key, session_id=session_id).first()


def session_entries_load(*, workspace: Workspace, key: SessionKey) -> list[dict[str, Any]] | None:
    """The stream's entries in append order, or None when it was never written (or was deleted)."""
    session = _session(workspace=workspace, project_key=key.project_key, session_id=key.session_id)
    if session is None:
        return None
    texts = list(
        SessionEntry.objects.filter(session=session, subpath=key.subpath).order_by("id").values_list("entry", flat=True)
    )
    if not texts:
        return None
    return [json.loads(text) for text in texts]


def session_list(*, workspace: Workspace, project_key: str) -> list[dict[str, Any]]:
    """Sessions of a project that have a main transcript, with its storage mtime (epoch ms)."""
    rows = AgentSession.objects.filter(workspace=workspace, project_key=project_key, mtime_ms__gt=0).order_by(
        "-mtime_ms", "id"
    )
    return [{"session_id": session_id, "mtime": mtime} for session_id, mtime in rows.values_list("session_id", "mtime_ms")]


def session_summary_list(*, workspace: Workspace, project_key: str) -> list[dict[str, Any]]:
    rows = AgentSession.objects.filter(
        workspace=workspace, project_key=project_key, summary__isnull=False
    ).order_by("-mtime_ms", "id")
    return [summary for summary in rows.values_list("summary", flat=True) if summary is not None]


def session_summary_get(*, workspace: Workspace, project_key: str, session_id: str) -> dict[str, Any]:
    """The summary sidecar and its version (0 and None before the first fold)."""
    session = _session(workspace=workspace, project_key=project_key, session_id=session_id)
    if session is None:
        return {"summary": None, "summary_version": 0}
    return {"summary": session.summary, "summary_version": session.summary_version}


def session_subkeys(*, workspace: Workspace, project_key: str, session_id: str) -> list[str]:
    session = _session(workspace=workspace, project_key=project_key, session_id=session_id)
    if session is None:
        return []
    return list(
        SessionEntry.objects.filter(session=session)
        .exclude(subpath="")
        .order_by("subpath")
        .values_list("subpath", flat=True)
        .distinct()
    )


def session_items(*, workspace: Workspace, session_id: str, limit: int | None) -> list[dict[str, Any]]:
    """An OpenAI session's items, oldest first: all of them, or the latest `limit`.

    One statement: the main branch's id is a scalar subquery, so the
    read is a backward scan of the (branch, floor_no) unique index that stops
    after `limit` rows, the same cost at floor 20 as at floor 10,000. (`main`
    of a session is never a fork.)"""

    if limit is not None and limit <= 0:
        return []
    # A conversation holds at most that many messages: a larger limit means
    # "all of them" (and must not reach the database as an overflowing LIMIT).
    limit = None if limit is not None and limit >= MAX_MESSAGES_PER_CONVERSATION else limit
    sql = page_statements()
    params: list[Any] = [workspace.pk, session_id, MAIN_BRANCH]
    if limit is None:
        statement = sql["items"].format(branch=sql["root_branch"], order="ASC", limit="")
    else:
        statement = sql["items"].format(branch=sql["root_branch"], order="DESC", limit="LIMIT %s")
        params.append(limit)
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        rows = cursor.fetchall()
    if limit is not None:
        rows.reverse()
    return [
        message_to_item(role=role, content=json_column(content), metadata=json_column(metadata))
        for role, content, metadata in rows
    ]


# --- LangGraph checkpoints -------------------------------------------------------

CHECKPOINT_PAGE_SIZE = 100
# Metadata filters are matched in Python (exact equality on any key, nested
# values included, the same on SQLite and PostgreSQL); rows are scanned in
# chunks of this size until the page is full.
CHECKPOINT_SCAN_CHUNK = 200


def _b64(data: bytes | memoryview) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def _writes_by_checkpoint(rows: list[Checkpoint]) -> dict[tuple[int, str, str], list[dict[str, Any]]]:
    if not rows:
        return {}
    wanted = {(row.conversation_id, row.checkpoint_ns, row.checkpoint_id) for row in rows}
    query = Q()
    for conversation_id, ns, checkpoint_id in wanted:
        query |= Q(conversation_id=conversation_id, checkpoint_ns=ns, checkpoint_id=checkpoint_id)
    grouped: dict[tuple[int, str, str], list[tuple[tuple[str, str, int], dict[str, Any]]]] = {}
    for write in CheckpointWrite.objects.filter(query):
        key = (write.conversation_id, write.checkpoint_ns, write.checkpoint_id)
        grouped.setdefault(key, []).append(
            (
                (write.task_path, write.task_id, write.idx),
                {"task_id": write.task_id, "channel": write.channel, "type": write.type, "value": _b64(write.value)},
            )
        )
    # LangGraph replays a step's writes in (task_path, task_id, idx) order;
    # sorted here in Python so a database collation cannot reorder them.
    return {key: [write for _, write in sorted(items, key=lambda pair: pair[0])] for key, items in grouped.items()}


def _checkpoint_out(row: Checkpoint, thread_id: str, writes: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "thread_id": thread_id,
        "checkpoint_ns": row.checkpoint_ns,
        "checkpoint_id": row.checkpoint_id,
        "parent_checkpoint_id": row.parent_checkpoint_id,
        "type": row.type,
        "checkpoint": _b64(row.checkpoint),
        "metadata": row.metadata,
        "pending_writes": writes,
    }


def _render(rows: list[Checkpoint]) -> list[dict[str, Any]]:
    writes = _writes_by_checkpoint(rows)
    return [
        _checkpoint_out(
            row,
            row.conversation.external_id,
            writes.get((row.conversation_id, row.checkpoint_ns, row.checkpoint_id), []),
        )
        for row in rows
    ]


def checkpoint_tuple(
    *, workspace: Workspace, thread_id: str, checkpoint_ns: str, checkpoint_id: str | None
) -> dict[str, Any] | None:
    """That checkpoint, or the latest of the namespace, with its pending writes.

    One statement: the checkpoint (picked through the unique (thread,
    namespace, id) index) LEFT JOINed to its writes, a row per write.

    The thread is found in the workspace; its checkpoints are not filtered by
    workspace again. That redundant test let PostgreSQL intersect the thread's
    checkpoints with the workspace's whole index and sort them all for the
    latest: 16.8 ms for a thread of 9,100 checkpoints in a workspace of
    212,000, against 0.17 ms for one step back along the unique index."""
    params: list[Any] = [checkpoint_ns, workspace.pk, thread_id]
    if checkpoint_id:
        params.append(checkpoint_id)
    sql = _checkpoint_tuple_sql(by_id=bool(checkpoint_id))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        return None
    first = rows[0]
    metadata = json_column(first[7])
    writes = sorted(
        (
            (task_path, task_id, idx),
            {"task_id": task_id, "channel": channel, "type": type_, "value": _b64(value)},
        )
        for *_, task_id, task_path, idx, channel, type_, value in rows
        if task_id is not None
    )
    return {
        "thread_id": thread_id,
        "checkpoint_ns": first[2],
        "checkpoint_id": first[3],
        "parent_checkpoint_id": first[4],
        "type": first[5],
        "checkpoint": _b64(first[6]),
        "metadata": metadata,
        # LangGraph replays a step's writes in (task_path, task_id, idx) order,
        # sorted here so a database collation cannot reorder them.
        "pending_writes": [write for _, write in writes],
    }


@functools.cache
def _checkpoint_tuple_sql(*, by_id: bool) -> str:
    """`checkpoint_tuple`'s statement: that id's checkpoint (`by_id`), or the
    namespace's latest. Written once per process, not per read."""
    cp, wr, conv = Checkpoint, CheckpointWrite, Conversation
    picked = ["id", "conversation", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint",
              "metadata"]
    written = ["task_id", "task_path", "idx", "channel", "type", "value"]
    where = [f"{column(cp, 'checkpoint_ns')} = %s",
             f"{column(cp, 'conversation')} = (SELECT {column(conv, 'id')} FROM {table(conv)} "
             f"WHERE {column(conv, 'workspace')} = %s AND {column(conv, 'external_id')} = %s)"]
    if by_id:
        where.append(f"{column(cp, 'checkpoint_id')} = %s")
    return (
        f"SELECT {', '.join('c.' + column(cp, name) for name in picked)}, "
        f"{', '.join('w.' + column(wr, name) for name in written)} "
        f"FROM (SELECT * FROM {table(cp)} WHERE {' AND '.join(where)} "
        f"ORDER BY {column(cp, 'checkpoint_id')} DESC LIMIT 1) c "
        f"LEFT JOIN {table(wr)} w ON w.{column(wr, 'conversation')} = c.{column(cp, 'conversation')} "
        f"AND w.{column(wr, 'checkpoint_ns')} = c.{column(cp, 'checkpoint_ns')} "
        f"AND w.{column(wr, 'checkpoint_id')} = c.{column(cp, 'checkpoint_id')}"
    )


def _matches(metadata: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return all(key in metadata and metadata[key] == value for key, value in wanted.items())


def checkpoint_page(
    *,
    workspace: Workspace,
    thread_id: str | None,
    checkpoint_ns: str | None,
    checkpoint_id: str | None,
    before: str | None,
    metadata_filter: dict[str, Any] | None,
    limit: int,
    cursor: tuple[str, int] | None,
) -> tuple[list[dict[str, Any]], tuple[str, int] | None]:
    """Newest first (descending checkpoint id, then row id). Returns the page and
    the keyset cursor of its last row when more may follow."""
    if thread_id is not None:
        # The thread is found in the workspace, its checkpoints by the thread
        # alone (the unique (thread, namespace, id) index): filtered by
        # workspace too, they were read along the workspace's whole index
        # (17-43 ms a page in a workspace of 212,000 checkpoints).
        thread = Conversation.objects.filter(workspace=workspace, external_id=thread_id).values("pk")[:1]
        rows = Checkpoint.objects.filter(conversation=Subquery(thread))
    else:
        rows = Checkpoint.objects.filter(workspace=workspace)
    rows = rows.select_related("conversation")
    if checkpoint_ns is not None:
        rows = rows.filter(checkpoint_ns=checkpoint_ns)
    if checkpoint_id:
        rows = rows.filter(checkpoint_id=checkpoint_id)
    if before:
        rows = rows.filter(checkpoint_id__lt=before)
    rows = rows.order_by("-checkpoint_id", "-id")
    picked: list[Checkpoint] = []
    position = cursor
    exhausted = False
    while len(picked) < limit and not exhausted:
        chunk_query = rows
        if position is not None:
            chunk_query = chunk_query.filter(
                Q(checkpoint_id__lt=position[0]) | Q(checkpoint_id=position[0], id__lt=position[1])
            )
        chunk = list(chunk_query[:CHECKPOINT_SCAN_CHUNK])
        exhausted = len(chunk) < CHECKPOINT_SCAN_CHUNK
        for row in chunk:
            position = (row.checkpoint_id, row.pk)
            if metadata_filter and not _matches(row.metadata or {}, metadata_filter):
                continue
            picked.append(row)
            if len(picked) == limit:
                break
    next_cursor = (picked[-1].checkpoint_id, picked[-1].pk) if len(picked) == limit else None
    return _render(picked), next_cursor
