"""The receivers of `conversations.hooks`: an edit, deletion, clear or
conversation deletion erases what was made of the text it removed."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from django.db import transaction

import conversations.hooks as hooks
from accounts.actors import Actor
from accounts.models import Workspace
from conversations.hooks import current_actor
from conversations.selectors.conversations import conversation_get
from memories.dispatch import lineage_erase_send, recall_embed_send
from memories.models import Scope
from memories.recall.index import passage_entries_delete, passage_entries_rebuild
from memories.recall.models import RecallEntry, RecallKind
from memories.services.lineage.erase import LineageReport, lineage_erase_conversation, lineage_erase_messages
from memories.services.scopes import branch_scope_id, scope_states_mark_erased

logger = logging.getLogger(__name__)


def _message_rows(*, workspace, external_id: str, message_id: str):

    conversation = conversation_get(workspace=workspace, external_id=external_id)
    if conversation is None:
        return None, []
    return conversation, list(conversation.messages.filter(pk=message_id))




def _mark_erased(workspace, conversation) -> None:
    # Before the passages: a running extraction holds its scope's lock while
    # it indexes passages, so the erasure takes the scope locks first, in the
    # order every erasure takes them.
    scope_states_mark_erased(workspace=workspace, scopes=[
        (Scope.BRANCH, branch_scope_id(conversation.external_id, name))
        for name in conversation.branches.values_list("name", flat=True)])


def _workspace(workspace_id):

    return Workspace.objects.filter(pk=workspace_id).first()


def _actor() -> Actor:

    return current_actor() or Actor.system()


def _answer(report: LineageReport) -> dict[str, Any]:
    return {"lineage": report.as_dict()}


def _erase_message(*, workspace: Workspace, conversation, event, passages_changed: bool) -> LineageReport:
    """What was made of the event's message goes (in the caller's transaction)."""
    return lineage_erase_messages(
        passages_changed=passages_changed, workspace=workspace, actor=_actor(), external_id=event.external_id,
        branch_names=conversation.branches.values_list("name", flat=True), user_id=conversation.user_id,
        message_ids=[event.message_id], floor_no=event.floor_no, branch_name=event.branch.name,
    )


def lineage_note_message_edited(*, event) -> dict[str, Any] | None:
    """Receiver of `message_edited`: a content change erases what was made of
    the old text and re-derives from the new one; its passages are rebuilt."""
    if not event.content_changed:
        return None
    workspace = _workspace(event.workspace_id)
    if workspace is None:
        return None
    conversation, messages = _message_rows(workspace=workspace, external_id=event.external_id,
                                           message_id=event.message_id)
    if conversation is None:
        return None
    with transaction.atomic():
        _mark_erased(workspace, conversation)
        indexed = RecallEntry.objects.filter(workspace=workspace, kind=RecallKind.PASSAGE,
                                             message_id=event.message_id).exists()
        if indexed:
            passage_entries_rebuild(workspace_id=workspace.pk, messages=messages)
            _embed_on_commit(workspace.pk)
        report = _erase_message(workspace=workspace, conversation=conversation, event=event,
                                passages_changed=indexed)
    return _answer(report)


def lineage_note_message_deleted(*, event) -> dict[str, Any] | None:
    """Receiver of `message_deleted`."""

    workspace = _workspace(event.workspace_id)
    if workspace is None:
        return None
    conversation = conversation_get(workspace=workspace, external_id=event.external_id)
    if conversation is None:
        return None
    with transaction.atomic():
        _mark_erased(workspace, conversation)
        dropped = passage_entries_delete(workspace_id=workspace.pk, message_ids=[event.message_id])
        report = _erase_message(workspace=workspace, conversation=conversation, event=event,
                                passages_changed=bool(dropped))
    return _answer(report)


def lineage_note_messages_cleared(*, event) -> dict[str, Any] | None:
    """Receiver of `messages_cleared`."""
    workspace = _workspace(event.workspace_id)
    if workspace is None:
        return None
    report = lineage_erase_conversation(
        workspace=workspace, actor=_actor(), conversation_pk=event.conversation_id, external_id=event.external_id,
        branch_names=[branch.name for branch in event.branches], conversation_exists=True,
    )
    return _answer(report)


def lineage_note_conversation_deleted(*, event) -> dict[str, Any] | None:
    """Receiver of `conversation_deleted` (an API delete or expiry)."""
    workspace = _workspace(event.workspace_id)
    if workspace is None:
        return None
    report = lineage_erase_conversation(
        workspace=workspace, actor=_actor(), conversation_pk=None, external_id=event.external_id,
        branch_names=[branch.name for branch in event.branches], conversation_exists=False,
    )
    return _answer(report)


_RECEIVERS = {
    "message_edited": ("MessageEdited", lineage_note_message_edited),
    "message_deleted": ("MessageDeleted", lineage_note_message_deleted),
    "messages_cleared": ("MessagesCleared", lineage_note_messages_cleared),
    "conversation_deleted": ("ConversationDeleted", lineage_note_conversation_deleted),
}


def lineage_receiver(signal_name: str):
    """The receiver connected to `conversations.hooks.<signal_name>`. It erases
    at once, so the request's answer can say what went; if that fails (the
    change it follows is committed already), the erasure is handed to a
    Celery task that retries it, rather than lost."""
    service = _RECEIVERS[signal_name][1]

    def receive(sender, event, **kwargs):
        try:
            return service(event=event)
        except Exception:
            logger.exception("lineage erasure after %s failed; queued to run again", signal_name)
            lineage_erase_send(signal_name, dataclasses.asdict(event))
            return None

    receive.__name__ = service.__name__
    return receive


def lineage_event_replay(*, signal_name: str, event: dict) -> dict[str, Any] | None:
    """Run a receiver's erasure again from its event as a plain dict."""

    type_name, service = _RECEIVERS[signal_name]
    fields = dict(event)
    if "branch" in fields:
        fields["branch"] = hooks.BranchRef(**fields["branch"])
    if "branches" in fields:
        fields["branches"] = tuple(hooks.BranchRef(**branch) for branch in fields["branches"])
    return service(event=getattr(hooks, type_name)(**fields))


def _embed_on_commit(workspace_id) -> None:
    transaction.on_commit(lambda: recall_embed_send(workspace_id))
