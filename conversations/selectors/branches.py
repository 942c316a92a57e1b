"""Reads of branches: one by name, the segments a fork shows, and the memory
pipeline's pending work derived from the counters the appends move."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import F, Value
from django.db.models.functions import Coalesce, Greatest

from accounts.models import Workspace
from conversations.models import MAIN_BRANCH, Branch, Conversation, Message
from conversations.selectors.conversations import conversation_get_or_404
from memory_project.errors import NotFoundError

# A fork of a fork of a fork...: reading walks the parent chain; this bounds the
# walk (and the number of per-segment queries a page can cost).
MAX_BRANCH_DEPTH = 32


def branch_get(*, conversation: Conversation, name: str = MAIN_BRANCH) -> Branch | None:
    return Branch.objects.filter(conversation=conversation, name=name).first()


def branch_get_or_404(*, conversation: Conversation, name: str = MAIN_BRANCH) -> Branch:
    branch = branch_get(conversation=conversation, name=name)
    if branch is None:
        raise NotFoundError(f"Branch '{name}' not found in conversation '{conversation.external_id}'.")
    return branch


def conversation_branch_get_or_404(*, workspace: Workspace, external_id: str, name: str = MAIN_BRANCH,
                                   annotations: dict[str, Any] | None = None) -> tuple[Conversation, Branch]:
    """The conversation and its branch `name` in one query, for a read that
    needs both; the same answers as `conversation_get_or_404`, then
    `branch_get_or_404`. `annotations` (expressions over the branch row, e.g.
    `Exists(...)` of rows that point at `conversation_id`) are set on the
    conversation; they are None when the branch had to be made first (not
    known: the caller reads what it wanted to learn)."""
    annotations = annotations or {}
    branch = (Branch.objects.select_related("conversation").annotate(**annotations)
              .filter(conversation__workspace=workspace, conversation__external_id=external_id, name=name).first())
    if branch is None:
        conversation = conversation_get_or_404(workspace=workspace, external_id=external_id)
        branch = branch_get_or_404(conversation=conversation, name=name)  # made meanwhile if no 404
        for key in annotations:
            setattr(conversation, key, None)
        return conversation, branch
    conversation = branch.conversation
    conversation.workspace = workspace  # as `conversation_get`
    for key in annotations:
        setattr(conversation, key, getattr(branch, key))
    return conversation, branch


def branch_list(*, conversation: Conversation) -> list[Branch]:
    return list(conversation.branches.select_related("parent").order_by("created_at", "id"))




def branch_pending_annotations(prefix: str = "") -> dict[str, Any]:
    """`pending_floors` and `pending_tokens` of the branch reached through
    `prefix` (e.g. "branch__" from a row with a branch foreign key), as
    annotations; 0 when there is no branch. The formula lives here so nobody
    else has to know how the counters make pending work."""
    def col(name: str) -> F:
        return F(f"{prefix}{name}")

    return {
        "pending_floors": Coalesce(Greatest(col("next_floor_no") - 1 - col("processed_floor_no"), Value(0)), Value(0)),
        "pending_tokens": Coalesce(Greatest(col("appended_tokens") - col("processed_tokens"), Value(0)), Value(0)),
    }


def branch_last_floor_no(*, branch_id: str) -> int:
    """The last floor number handed out on the branch (0 before its first message)."""
    next_floor_no = Branch.objects.filter(pk=branch_id).values_list("next_floor_no", flat=True).first()
    return (next_floor_no or 1) - 1


@dataclass(frozen=True)
class PendingBranch:
    workspace_id: str
    external_id: str
    branch_id: str
    branch_name: str


def branches_idle_with_pending(*, idle_before: datetime, limit: int) -> list[PendingBranch]:
    """Branches with floors the memory pipeline has not read, in conversations
    that have had no new message since `idle_before`, across workspaces (for
    the periodic sweep). A periodic scan of the branch table: nothing on the
    append path pays for an index on it."""
    rows = (
        Branch.objects.filter(
            conversation__last_message_at__lt=idle_before, next_floor_no__gt=F("processed_floor_no") + 1
        )
        .order_by("conversation__last_message_at")
        .values_list("conversation__workspace_id", "conversation__external_id", "pk", "name")[:limit]
    )
    return [PendingBranch(*row) for row in rows]




@dataclass(frozen=True)
class Segment:
    """The floors `(low, high]` of one branch that a reader of some branch sees."""

    branch_id: str
    branch_name: str
    low: int  # exclusive
    high: int | None  # inclusive; None = unbounded


@dataclass
class BranchView:
    """A branch with the chain of segments it shows, oldest floors first."""

    branch: Branch
    segments: list[Segment] = field(default_factory=list)

    @property
    def branch_names(self) -> dict[str, str]:
        return {segment.branch_id: segment.branch_name for segment in self.segments}

    def shows(self, message: Message) -> bool:
        return self.shows_floor(branch_id=message.branch_id, floor_no=message.floor_no)

    def shows_floor(self, *, branch_id: str, floor_no: int) -> bool:
        for segment in self.segments:
            if branch_id == segment.branch_id:
                return floor_no > segment.low and (segment.high is None or floor_no <= segment.high)
        return False


def branch_view(*, branch: Branch) -> BranchView:
    """Resolve the parent chain of `branch` into floor segments.

    A fork at floor F of its parent starts its own floors at F+1, so the
    segments' floor ranges never overlap and floor order is reading order.
    One query per ancestor (forks are rarely more than a level or two deep).
    """
    segments: list[Segment] = []
    current: Branch | None = branch
    high: int | None = None
    depth = 0
    while current is not None and depth < MAX_BRANCH_DEPTH:
        low = (current.fork_floor_no or 0) if current.parent_id else 0
        if high is None or high > low:
            segments.append(Segment(branch_id=current.pk, branch_name=current.name, low=low, high=high))
        if current.parent_id is None:
            break
        fork = current.fork_floor_no or 0
        high = fork if high is None else min(high, fork)
        current = Branch.objects.filter(pk=current.parent_id).first()
        depth += 1
    segments.reverse()
    return BranchView(branch=branch, segments=segments)
