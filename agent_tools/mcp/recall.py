"""What the `recall` tool reads: the context assembly of
`POST /v1/conversations/{cid}/context`, or, without a conversation, the same
memory selection over a user's (and the global) memories.

The one place the agent tools call retrieval: when retrieval moves, only
`recall_context` changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memories.recall.context import ContextRequest, context_assemble, recall, selection_report, user_recall_scope


@dataclass
class Recalled:
    query: str
    budget: int
    tokens_used: int
    # Each: kind (memory | passage), id, content, tokens, and the memory's
    # type, scope, fact_key or the passage's message, floor and role.
    memories: list[dict[str, Any]] = field(default_factory=list)
    omitted_count: int = 0
    summary: str | None = None
    conversation_id: str | None = None
    user_id: str | None = None


def recall_context(
    *, workspace, query: str, budget: int, strategy: str, conversation_id: str | None, user_id: str | None
) -> Recalled:
    """What is recalled for `query` under `budget` tokens: in a conversation
    exactly what its context endpoint injects (memories and passages of its
    messages, with its rolling summary); for a user, among the global memories
    and that user's; with neither, among the global ones. Raises NotFoundError
    for an unknown conversation."""

    if conversation_id is not None:
        body = context_assemble(
            workspace=workspace, external_id=conversation_id,
            request=ContextRequest(query=query, strategy=strategy, memory_token_budget=budget, max_messages=0),
        )
        report = body["memory"] or {}
        summary = body.get("summary")
    else:
        selection = recall(workspace=workspace, scope=user_recall_scope(workspace=workspace, user_id=user_id),
                           query=query, strategy=strategy, budget=budget)
        report = selection_report(selection, scopes=[], scope_id=None)
        summary = None
    return Recalled(
        query=query, budget=budget, tokens_used=report.get("tokens_used", 0),
        memories=[_entry(entry) for entry in report.get("injected", [])],
        omitted_count=report.get("omitted_count", 0), summary=summary,
        conversation_id=conversation_id, user_id=user_id,
    )


_FIELDS = ("kind", "id", "type", "summary_tier", "scope", "content", "fact_key", "tokens",
           "source_message_id", "floor_no", "role")


def _entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A memory (id, type, scope, fact_key) or a passage of a message
    (source_message_id, floor_no, role); the fields of the other kind are None."""
    return {name: entry.get(name) for name in _FIELDS}
