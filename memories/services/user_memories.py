"""Forgetting a user: every memory of a user's scope (and, where asked, the
memories made from that user's conversations) deleted as a batch delete
would, following lineage: the summaries compacted from them go too, each
with its versions redacted, and what remains of their scopes is compacted
again."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from accounts.actors import Actor
from memories.selectors.items import memory_item_list
from memories.services.items_batch import MAX_BATCH_IDS
from memories.services.lineage.erase import LineageReport, memories_delete_following_lineage
from memory_project.errors import ValidationError


def user_memories_delete(*, workspace, actor: Actor, user_id: Any, include_conversations: bool = False
                         ) -> tuple[list[str], LineageReport]:
    """Delete every memory `GET /v1/memories?user_id=...` lists (with
    `include_conversations`, the same); one transaction. Returns the ids
    deleted and the lineage report of everything erased with them."""
    if not isinstance(user_id, str) or not user_id:
        raise ValidationError("user_id: required, the user whose memories are deleted.")
    filters = {"user_id": user_id, **({"include_conversations": "true"} if include_conversations else {})}
    deleted: list[str] = []
    report = LineageReport()
    with transaction.atomic():
        ids = list(memory_item_list(workspace=workspace, filters=filters).order_by("pk").values_list("pk", flat=True))
        for start in range(0, len(ids), MAX_BATCH_IDS):
            result, chunk_report = memories_delete_following_lineage(
                workspace=workspace, actor=actor, ids=ids[start:start + MAX_BATCH_IDS])
            deleted += [row["id"] for row in result.results if row["result"] == "deleted"]
            report.memory_ids += chunk_report.memory_ids
            report.summaries_cleared += chunk_report.summaries_cleared
            report.rederive_job_ids += chunk_report.rederive_job_ids
    return deleted, report
