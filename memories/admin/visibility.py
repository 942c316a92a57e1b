"""Who may read what awaits review. In a workspace that requires review, the
text of a memory never approved (pending, or rejected from the queue) is
shown only to those who review it (the review queue's change permission);
everyone else sees that such a memory exists, not what it says. Every console
page that shows memory text beside something else (a conversation's floors,
a memory's edges, the review context) asks here, and the memory and version
lists leave such memories out for them (`hide_unapproved`): a list, a search,
a memory's page and its redaction pages would otherwise show the text."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from memories.models import LifecycleStatus, MemoryItem

# Who reviews: whoever may change the review queue's items.
REVIEW_PERMISSION = "memories.change_reviewitem"
# What is in force after approval: readable by every operator of the workspace.
APPROVED_STATUSES = (LifecycleStatus.ACTIVE, LifecycleStatus.COMPACTED)
HIDDEN_TEXT = "(awaiting review: shown to reviewers only)"


def approved_only(request, workspace) -> bool:
    """Whether this request may read only approved memories of `workspace`."""
    return bool(workspace.requires_review) and not request.user.has_perm(REVIEW_PERMISSION)


def readable_text(item, *, approved_only: bool, text: str) -> str | None:
    """`text` (the item's content or an excerpt of it), or None where the
    request may not read it."""
    if approved_only and item.lifecycle_status not in APPROVED_STATUSES:
        return None
    return text


def _never_approved() -> Q:
    return Q(workspace__requires_review=True) & ~Q(lifecycle_status__in=APPROVED_STATUSES)


def hide_unapproved(request, queryset: QuerySet, *, versions: bool = False) -> QuerySet:
    """`queryset` of memories (or, with `versions`, of memory versions)
    without those the request may not read: for whoever does not review, the
    memories of a workspace that requires review that are not in force."""
    if request.user.has_perm(REVIEW_PERMISSION):
        return queryset
    if versions:
        return queryset.exclude(memory_id__in=MemoryItem.objects.filter(_never_approved()).values("pk"))
    return queryset.exclude(_never_approved())
