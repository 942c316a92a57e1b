"""Reads by id for what refers to messages and conversations from outside this
app: a memory's sources and scope (floor, chat, branch), the console's links to
them, the system messages context assembly puts first, the pipeline's expiry
of idle conversations. `memories` and `agent_tools` read conversations through
these and the other selectors, never through the models."""

# SQL here is built from the models' table and column names and the caller's
# own column expression; every value is a bound parameter.
# ruff: noqa: S608
from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from django.db.models import Exists, F, Q, QuerySet, TextField
from django.db.models.expressions import Expression
from django.db.models.functions import Cast, Coalesce, Substr

from conversations.models import Branch, Conversation, Message
from memory_project.db import column, table


def message_in_conversation(*, message_id: Expression, conversation_id: int) -> Exists:
    """Whether the message `message_id` (an `OuterRef` to a row's column)
    belongs to the conversation: a test per row on the message's primary key,
    never a list of the conversation's messages."""
    return Exists(Message.objects.filter(pk=message_id, conversation_id=conversation_id))


def message_in_conversation_sql(message_id_sql: str) -> str:
    """The same test for a statement written by hand: `message_id_sql` is the
    column holding the message id (the caller's own SQL, no value); the
    conversation's pk is its one parameter."""
    return (f"EXISTS (SELECT 1 FROM {table(Message)} u WHERE u.{column(Message, 'id')} = {message_id_sql}"
            f" AND u.{column(Message, 'conversation')} = %s)")


def messages_of_conversation(*, conversation: Conversation) -> QuerySet:
    """The ids of a conversation's messages, as a subquery for a filter."""
    return Message.objects.filter(conversation=conversation).values("id")


def system_messages(*, branch_ids: Iterable[int], limit: int) -> list[Message]:
    """The latest `limit` system messages stored on these branches, newest first."""
    return list(Message.objects.filter(branch_id__in=list(branch_ids), role="system").order_by("-floor_no")[:limit])


def message_source(*, workspace_id: str, message_ids: list[str]) -> Message | None:
    """One of the workspace's messages with these ids, with its conversation and
    branch (content deferred: a message may hold megabytes)."""
    return (Message.objects.filter(workspace_id=workspace_id, pk__in=message_ids)
            .select_related("conversation", "branch").defer("content").first())


def message_places(*, workspace_id: str, message_ids: list[str]) -> dict[str, Message]:
    """Where the workspace's messages with these ids are (conversation, branch,
    floor), by id; no content."""
    return {m.pk: m for m in Message.objects.filter(workspace_id=workspace_id, pk__in=message_ids)
            .only("id", "conversation_id", "branch_id", "floor_no")}


def message_labels(*, message_ids: Iterable[str], head_chars: int | None) -> list[tuple[Any, ...]]:
    """(pk, conversation pk, conversation's business id, branch pk, branch
    name, floor, role[, the head of the stored content]) of the messages: what a
    label in the console names. `head_chars` reads that many characters of the
    stored JSON, not the whole of it."""
    return _labels(Message.objects.filter(pk__in=list(message_ids)), head_chars)


def floor_labels(*, places: Iterable[tuple[int, int]], head_chars: int) -> list[tuple[Any, ...]]:
    """`message_labels` of the messages at these (branch pk, floor) places:
    the floors around a memory's source, for the review console."""
    query = Q()
    for branch_id, floor_no in places:
        query |= Q(branch_id=branch_id, floor_no=floor_no)
    if not query:
        return []
    return _labels(Message.objects.filter(query), head_chars)


def _labels(messages, head_chars: int | None) -> list[tuple[Any, ...]]:
    fields = ["pk", "conversation_id", "conversation__external_id", "branch_id", "branch__name", "floor_no", "role"]
    if head_chars:
        messages = messages.annotate(head=Substr(Cast("content", TextField()), 1, head_chars))
        fields.append("head")
    return list(messages.values_list(*fields))


def conversation_find(*, workspace_id: str, ref: str) -> Conversation | None:
    """The workspace's conversation a scope names: by its business id, else
    by its primary key (scopes written before business ids were used)."""
    found = Conversation.objects.filter(workspace_id=workspace_id, external_id=ref).first()
    if found is None and ref.isdigit():
        found = Conversation.objects.filter(workspace_id=workspace_id, pk=int(ref)).first()
    return found


def conversation_pks(*, external_ids: Mapping[str, Iterable[str]]) -> dict[tuple[str, str], int]:
    """(workspace id, business id) -> pk, for the business ids given per workspace."""
    query = Q()
    for workspace_id, ids in external_ids.items():
        query |= Q(workspace_id=workspace_id, external_id__in=list(ids))
    if not query:
        return {}
    return {(workspace_id, external_id): pk for pk, workspace_id, external_id in
            Conversation.objects.filter(query).values_list("pk", "workspace_id", "external_id")}


def conversations_idle_since(*, cutoff: datetime, limit: int) -> QuerySet:
    """Conversations with no message (or, without messages, not created) since
    `cutoff`, with their workspace: at most `limit`."""
    return (Conversation.objects.annotate(last_active=Coalesce(F("last_message_at"), F("created_at")))
            .filter(last_active__lt=cutoff).select_related("workspace")[:limit])


def conversations_with_summary(*, workspace) -> QuerySet:
    """The workspace's conversations that have a rolling summary, in pk order."""
    return (Conversation.objects.filter(workspace=workspace, metadata__has_key="summary")
            .exclude(metadata__summary="").order_by("pk"))


def branch_exists(*, branch_id: int) -> bool:
    return Branch.objects.filter(pk=branch_id).exists()
