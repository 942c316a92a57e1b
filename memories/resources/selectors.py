"""Reads of a conversation's attached memory stores."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import Exists, OuterRef

from accounts.models import Workspace
from conversations.selectors.conversations import conversation_get_or_404
from memories.paths import mount_slug
from memories.resources.models import AccessMode, ConversationResource

if TYPE_CHECKING:
    from conversations.models import Conversation

MOUNT_ROOT = "/mnt/memory/"


@dataclass(frozen=True)
class AttachedStore:
    resource: ConversationResource
    mount_path: str


def mount_paths(names: list[str]) -> list[str]:
    """Mount paths for stores attached in this order: each store's slug, made
    unique within the conversation with `-2`, `-3`, ... (names may collide)."""
    taken: set[str] = set()
    out: list[str] = []
    for name in names:
        slug = mount_slug(name)
        candidate, n = slug, 1
        while candidate in taken:
            n += 1
            candidate = f"{slug}-{n}"
        taken.add(candidate)
        out.append(MOUNT_ROOT + candidate)
    return out


def conversation_resource_list(*, conversation: Conversation) -> list[AttachedStore]:
    """The attachments in their given order with the snapshots taken when they
    were attached. One query."""
    rows = list(
        ConversationResource.objects.filter(conversation=conversation)
        .select_related("memory_store")
        .order_by("position", "id")
    )
    # Rows attached before snapshots existed fall back to the live store.
    fallback = mount_paths([row.memory_store.name for row in rows])
    return [AttachedStore(row, row.mount_path or path) for row, path in zip(rows, fallback, strict=True)]


def stores_attached() -> Exists:
    """Whether a conversation has memory stores attached, as an expression
    over a row with a `conversation_id` column (a branch)."""
    return Exists(ConversationResource.objects.filter(conversation_id=OuterRef("conversation_id")))


def conversation_resources_get(*, workspace: Workspace, external_id: str) -> tuple[Conversation, list[AttachedStore]]:
    conversation = conversation_get_or_404(workspace=workspace, external_id=external_id)
    return conversation, conversation_resource_list(conversation=conversation)


def conversation_store_access(*, conversation: Conversation, store_id: str) -> str | None:
    """`read_write` / `read_only` when the store is attached to the conversation, else None."""
    return (
        ConversationResource.objects.filter(conversation=conversation, memory_store_id=store_id)
        .values_list("access", flat=True)
        .first()
    )


__all__ = [
    "AccessMode",
    "AttachedStore",
    "conversation_resource_list",
    "conversation_resources_get",
    "conversation_store_access",
]
