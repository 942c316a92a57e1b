"""Reads of conversations: one by its id, and the keyset-paged list."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet

from accounts.models import Workspace
from conversations.filters import ConversationFilterSet
from conversations.models import Conversation
from memory_project.errors import NotFoundError, ValidationError
from memory_project.instants import in_utc


def conversation_get(*, workspace: Workspace, external_id: str) -> Conversation | None:
    conversation = Conversation.objects.filter(workspace=workspace, external_id=external_id).first()
    if conversation is not None:
        # The caller's row, so `conversation.workspace` (its review setting,
        # say) costs no query of its own.
        conversation.workspace = workspace
    return conversation


def conversation_get_or_404(*, workspace: Workspace, external_id: str) -> Conversation:
    conversation = conversation_get(workspace=workspace, external_id=external_id)
    if conversation is None:
        raise NotFoundError(f"Conversation '{external_id}' not found.")
    return conversation




def encode_conversation_cursor(conversation: Conversation) -> str:
    raw = json.dumps([conversation.last_message_at.isoformat(), conversation.pk], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_conversation_cursor(cursor: str, *, param: str) -> tuple[datetime, int]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        stamp, pk = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
        moment = datetime.fromisoformat(stamp)
        if not isinstance(pk, int) or moment.tzinfo is None:
            raise ValueError
        # The service writes cursors in UTC; one no datetime can hold is forged.
        moment = in_utc(moment)
        if moment is None:
            raise ValueError
    except (ValueError, TypeError, binascii.Error, UnicodeError):
        raise ValidationError(f"{param}: not a cursor this API returned.")
    return moment, pk


@dataclass
class ConversationPage:
    conversations: list[Conversation]
    next_cursor: str | None
    previous_cursor: str | None


def conversation_list(
    *,
    workspace: Workspace,
    filters: Mapping[str, Any] | None = None,
    order: str = "desc",
    limit: int = 20,
    after: str | None = None,
    before: str | None = None,
) -> ConversationPage:
    """Conversations ordered by `last_message_at` (then id), keyset-paged.

    `last_message_at` is the time of the newest message, or the creation time
    while a conversation has none, so every row has a sort key. Cursors are
    opaque (`next_cursor` -> `after`, `previous_cursor` -> `before`). One query.
    """
    if after and before:
        raise ValidationError("after and before are mutually exclusive.")
    qs = ConversationFilterSet(filters or {}, queryset=Conversation.objects.filter(workspace=workspace)).qs
    forward = before is None
    descending = (order == "desc") == forward
    cursor = after or before
    if cursor:
        moment, pk = decode_conversation_cursor(cursor, param="after" if after else "before")
        if descending:
            qs = qs.filter(Q(last_message_at__lt=moment) | Q(last_message_at=moment, pk__lt=pk))
        else:
            qs = qs.filter(Q(last_message_at__gt=moment) | Q(last_message_at=moment, pk__gt=pk))
    ordering = ("-last_message_at", "-pk") if descending else ("last_message_at", "pk")
    rows = list(qs.order_by(*ordering)[: limit + 1])
    has_more = len(rows) > limit
    rows = rows[:limit]
    if not forward:
        rows.reverse()
    first = encode_conversation_cursor(rows[0]) if rows else None
    last = encode_conversation_cursor(rows[-1]) if rows else None
    if forward:
        return ConversationPage(rows, next_cursor=last if has_more else None, previous_cursor=first if cursor else None)
    return ConversationPage(rows, next_cursor=last, previous_cursor=first if has_more else None)


def user_conversation_ids(*, workspace_id: str, user_id: str) -> QuerySet:
    """The business ids of a user's conversations, as a subquery for a filter."""
    return Conversation.objects.filter(workspace_id=workspace_id, user_id=user_id).values("external_id")
