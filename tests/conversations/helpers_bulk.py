"""Fast fixtures for big conversations: rows written with bulk_create, counters kept right."""

from __future__ import annotations

from django.db import transaction

from conversations.models import Branch, Message
from conversations.services import conversation_get_or_create


def bulk_fill(workspace, external_id: str, count: int, *, batch_size: int = 2000):
    conversation, _ = conversation_get_or_create(workspace=workspace, external_id=external_id)
    with transaction.atomic():
        branch = Branch.objects.select_for_update().get(conversation=conversation, name="main")
        start = branch.next_floor_no
        Message.objects.bulk_create(
            [
                Message(
                    workspace=workspace,
                    conversation=conversation,
                    branch=branch,
                    floor_no=start + i,
                    role="user" if i % 2 == 0 else "assistant",
                    content=f"message {start + i}",
                    content_size_bytes=12,
                    token_estimate=3,
                )
                for i in range(count)
            ],
            batch_size=batch_size,
        )
        branch.next_floor_no = start + count
        branch.save(update_fields=["next_floor_no"])
        conversation.message_count += count
        newest = Message.objects.filter(conversation=conversation).order_by("-created_at").first()
        if newest is not None:
            conversation.last_message_at = newest.created_at
        conversation.save(update_fields=["message_count", "last_message_at"])
    return conversation
