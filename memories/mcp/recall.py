"""What the `recall` tool reads: the context assembly of
`POST /v1/conversations/{cid}/context`, or, without a conversation, the same
memory selection over a user's (and the global) memories.

The one place the agent tools call retrieval: when retrieval moves, only
`recall_context` changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Recalled:
    query: str
    budget: int
    tokens_used: int
    # Each: id, type, scope, content, fact_key (facts), tokens.
    memories: list[dict[str, Any]] = field(default_factory=list)
    omitted_count: int = 0
    summary: str | None = None
    conversation_id: str | None = None
    user_id: str | None = None


def recall_context(
    *, workspace, query: str, budget: int, strategy: str, conversation_id: str | None, user_id: str | None
) -> Recalled:
    """The memories chosen for `query` under `budget` tokens: in a conversation
    exactly as its context endpoint chooses them (with its rolling summary);
    for a user, among the global memories and that user's; with neither, among
    the global ones. Raises NotFoundError for an unknown conversation."""
    from memories.models import Scope
    from memories.recall.context import ContextRequest, context_assemble
    from memories.selectors.context import memory_select
    from memories.services.items_batch import memory_items_mark_used

    if conversation_id is not None:
        body = context_assemble(
            workspace=workspace, external_id=conversation_id,
            request=ContextRequest(query=query, strategy=strategy, memory_token_budget=budget, max_messages=0),
        )
        report = body["memory"] or {}
        return Recalled(
            query=query, budget=budget, tokens_used=report.get("tokens_used", 0),
            memories=[_memory(entry) for entry in report.get("injected", [])],
            omitted_count=report.get("omitted_count", 0), summary=body.get("summary"),
            conversation_id=conversation_id,
        )
    from django.db.models import Q

    scopes = Q(scope=Scope.GLOBAL)
    if user_id is not None:
        scopes |= Q(scope="user", scope_id=user_id)
    selection = memory_select(workspace=workspace, scopes=scopes, query=query, strategy=strategy, budget=budget)
    memory_items_mark_used(workspace=workspace, ids=[c.item.pk for c in selection.injected])
    return Recalled(
        query=query, budget=budget, tokens_used=selection.tokens_used,
        memories=[_memory(c.explain(with_content=True)) for c in selection.injected],
        omitted_count=len(selection.omitted), user_id=user_id,
    )


def _memory(entry: dict[str, Any]) -> dict[str, Any]:
    return {name: entry.get(name) for name in ("id", "type", "summary_tier", "scope", "content", "fact_key", "tokens")}
