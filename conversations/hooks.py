"""What conversations announce to the rest of the service after a change commits.

Conversations import nothing from the apps built on them; an app that must
react to messages (the memory pipeline, lineage erasure) connects a receiver to
one of these signals in its `AppConfig.ready()`. Each signal is sent once, from
`transaction.on_commit`, with one keyword argument `event` (a frozen dataclass
below) that holds ids and numbers only, never message content:

| signal | sent by | event |
| --- | --- | --- |
| `messages_appended` | `message_append`, `messages_append` | `MessagesAppended` |
| `message_edited` | `message_update` | `MessageEdited` |
| `message_deleted` | `message_delete` | `MessageDeleted` |
| `messages_cleared` | `messages_clear` | `MessagesCleared` |
| `conversation_deleted` | `conversation_delete` | `ConversationDeleted` |

Receivers run after the commit, in the request that made the change, so they
must be quick: dispatch work (a Celery job) rather than do it. An exception in
a receiver is logged and swallowed, because the change it reacts to is already
committed and answered; whatever a receiver skipped must be recoverable by a
periodic sweep. Nothing is registered with `on_commit` while a signal has no
receiver, so an unused hook costs nothing.

A view whose answer must say what the receivers did (lineage erasure reports
the memories it removed) runs the service inside `collect_answers(actor=...)`:
a receiver may return a mapping, which is merged into the dict the block
yields, and may read the request's actor with `current_actor()`. Outside such
a block receivers' return values are dropped and `current_actor()` is None.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.dispatch import Signal

logger = logging.getLogger(__name__)

messages_appended = Signal()
message_edited = Signal()
message_deleted = Signal()
messages_cleared = Signal()
conversation_deleted = Signal()


@dataclass(frozen=True)
class BranchRef:
    id: str
    name: str


@dataclass(frozen=True)
class MessagesAppended:
    """Messages appended to one branch in one transaction.

    `message_ids` are in floor order, floors `first_floor_no..last_floor_no`.
    The counters are the branch's after the append: `pending_floors` /
    `pending_tokens` are what the memory pipeline has not read yet, and
    `pending_floors - floors` what it had not read before this append.
    """

    workspace_id: str
    conversation_id: int
    external_id: str
    branch: BranchRef
    message_ids: tuple[str, ...]
    first_floor_no: int
    last_floor_no: int
    tokens: int
    pending_floors: int
    pending_tokens: int
    # The branch's first own floors: nothing was ever appended to it before.
    opens_branch: bool
    # The messages as stored (`Message` objects, content included), in floor
    # order: what a receiver needs to index them without reading them back.
    messages: tuple = ()

    @property
    def floors(self) -> int:
        return len(self.message_ids)


@dataclass(frozen=True)
class MessageEdited:
    """A message's content and/or metadata was overwritten."""

    workspace_id: str
    conversation_id: int
    external_id: str
    branch: BranchRef
    message_id: str
    floor_no: int
    content_changed: bool


@dataclass(frozen=True)
class MessageDeleted:
    workspace_id: str
    conversation_id: int
    external_id: str
    branch: BranchRef
    message_id: str
    floor_no: int


@dataclass(frozen=True)
class MessagesCleared:
    """Every message of every branch was deleted; the conversation and its
    branches stay. `last_floor_nos` maps a branch id to the highest floor
    handed out on it before the clear (floors are never reused), so the
    cleared messages were the floors up to it."""

    workspace_id: str
    conversation_id: int
    external_id: str
    branches: tuple[BranchRef, ...]
    last_floor_nos: dict[str, int]
    deleted_count: int


@dataclass(frozen=True)
class ConversationDeleted:
    """The conversation, its branches and messages are gone. `conversation_id`
    no longer exists; the external id may be reused by a new conversation."""

    workspace_id: str
    conversation_id: int
    external_id: str
    branches: tuple[BranchRef, ...]


@dataclass
class _Collector:
    actor: Any
    answers: dict[str, Any] = field(default_factory=dict)


_collector: ContextVar[_Collector | None] = ContextVar("conversations_hook_collector", default=None)


@contextmanager
def collect_answers(*, actor: Any = None) -> Iterator[dict[str, Any]]:
    """Collect what receivers answer for the changes committed inside the block
    (see the module's docstring). Commit inside the block: the answers arrive
    from `on_commit`."""
    collector = _Collector(actor=actor)
    token = _collector.set(collector)
    try:
        yield collector.answers
    finally:
        _collector.reset(token)


def current_actor() -> Any:
    """The actor given to the enclosing `collect_answers`, or None."""
    collector = _collector.get()
    return collector.actor if collector is not None else None


def send_on_commit(signal: Signal, event: object) -> None:
    """Send `signal` with `event` once the current transaction commits (at once
    outside a transaction); no-op while nobody listens."""
    if not signal.has_listeners():
        return
    transaction.on_commit(lambda: _send(signal, event))


def _send(signal: Signal, event: object) -> None:
    for receiver, outcome in signal.send_robust(sender=type(event), event=event):
        if isinstance(outcome, Exception):
            logger.error(
                "receiver %r of %s failed after commit",
                receiver,
                type(event).__name__,
                exc_info=(type(outcome), outcome, outcome.__traceback__),
            )
        elif isinstance(outcome, Mapping):
            collector = _collector.get()
            if collector is not None:
                collector.answers.update(outcome)
