"""Writes to branches: forks, and the memory pipeline's progress counters."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce

from accounts.models import Workspace
from conversations.models import Branch, Conversation, Message
from conversations.selectors.branches import MAX_BRANCH_DEPTH
from conversations.services.conversations import conversation_lock
from conversations.services.validation import validate_branch_name
from memory_project.errors import ConflictError, NotFoundError, ValidationError


def branch_create(*, workspace: Workspace, external_id: str, name: str, from_message_id: str) -> Branch:
    """Fork a branch at a message: it shows that message's branch up to it, then its own floors.

    The fork's own floors start right after the fork message's floor; the
    floors it inherits count as read for its pending work (they were appended
    to, and are counted on, the parent).
    """
    name = validate_branch_name(name)
    if not isinstance(from_message_id, str) or not from_message_id:
        raise ValidationError("from_message_id: required.")
    with transaction.atomic():
        conversation = conversation_lock(workspace=workspace, external_id=external_id)
        if conversation is None:
            raise NotFoundError(f"Conversation '{external_id}' not found.")
        fork = Message.objects.filter(conversation=conversation, pk=from_message_id).select_related("branch").first()
        if fork is None:
            raise NotFoundError(f"Message '{from_message_id}' not found in conversation '{external_id}'.")
        if Branch.objects.filter(conversation=conversation, name=name).exists():
            raise ConflictError(f"Branch '{name}' already exists in conversation '{external_id}'.")
        depth, parent = 1, fork.branch
        while parent.parent_id is not None:
            depth += 1
            parent = Branch.objects.only("parent_id").get(pk=parent.parent_id)
        if depth >= MAX_BRANCH_DEPTH:
            raise ValidationError(f"from_message_id: forks may nest at most {MAX_BRANCH_DEPTH} levels deep.")
        return Branch.objects.create(
            conversation=conversation,
            name=name,
            parent=fork.branch,
            fork_message_id=fork.pk,
            fork_floor_no=fork.floor_no,
            next_floor_no=fork.floor_no + 1,
            processed_floor_no=fork.floor_no,
        )


def _lock_conversation_of(branch_id: str) -> bool:
    """Lock the branch's conversation row; False when the branch is gone.

    Appends lock the conversation, then the branch. Taking the same order here
    means a pipeline transaction that also edits the conversation (its rolling
    summary) cannot deadlock with an append.
    """
    conversation_id = Branch.objects.filter(pk=branch_id).values("conversation_id")
    return Conversation.objects.select_for_update().filter(pk__in=Subquery(conversation_id)).exists()


def branch_mark_processed(*, branch_id: str, through_floor_no: int) -> None:
    """The memory pipeline has read the branch through `through_floor_no`.

    Moves `processed_floor_no` forward (never back) and adds the tokens of the
    branch's own messages in the floors newly covered to `processed_tokens`.
    To mark a branch caught up after its last floors were deleted unread, pass
    the last floor handed out (`selectors.branch_last_floor_no`) read before
    the read that came back empty. Call inside the pipeline's transaction: the
    counters then move with what it wrote.
    """
    with transaction.atomic():
        if not _lock_conversation_of(branch_id):
            return
        newly_read = (
            Message.objects.filter(
                branch_id=OuterRef("pk"), floor_no__gt=OuterRef("processed_floor_no"), floor_no__lte=through_floor_no
            )
            .order_by()
            .values("branch_id")
            .annotate(total=Sum("token_estimate"))
            .values("total")
        )
        Branch.objects.filter(pk=branch_id, processed_floor_no__lt=through_floor_no).update(
            processed_tokens=F("processed_tokens") + Coalesce(Subquery(newly_read), 0),
            processed_floor_no=through_floor_no,
        )


def branch_processed_reset(*, branch_id: str) -> None:
    """Nothing of the branch counts as read any more (a rebuild re-reads it from floor 1)."""
    with transaction.atomic():
        if not _lock_conversation_of(branch_id):
            return
        Branch.objects.filter(pk=branch_id).update(
            processed_floor_no=Coalesce(F("fork_floor_no"), 0), processed_tokens=0
        )
