"""The rolling summary a reader may see, one definition for every reader
(`/context` and MCP `recall`, the MCP summary resource, the conversation's
own `summary` metadata, which the pipeline writes only where this allows).

In a workspace that requires review, the extractor's rolling summary is built
from the floors themselves, so it quotes what the pending memories say: it is
kept for operators in the scope's state (`ScopeState.rolling_summary`, shown
in the admin as withheld) and never shown to a reader. Readers get a summary
built only from approved summaries of the branch (the latest approved macro,
then the approved micros after it): pending and rejected memories never reach
it, so rejecting them releases nothing.
"""

from __future__ import annotations

from memories.models import LifecycleStatus, MemoryItem, MemoryType, Scope, ScopeState, Status, SummaryTier
from memories.services.scopes import branch_scope_id

MAIN_BRANCH = "main"
# The design's length of a rolling summary.
MAX_SUMMARY_CHARS = 500


def approved_summary(*, workspace_id: str, scope_id: str) -> str:
    """The branch scope's summary made of approved summaries only."""
    rows = list(
        MemoryItem.objects.filter(
            workspace_id=workspace_id, scope=Scope.BRANCH, scope_id=scope_id, type=MemoryType.SUMMARY,
            status=Status.ACTIVE, lifecycle_status=LifecycleStatus.ACTIVE,
        ).order_by("coverage_end_floor_no", "pk").values_list("summary_tier", "content", "coverage_end_floor_no")
    )
    macros = [row for row in rows if row[0] == SummaryTier.MACRO]
    start = macros[-1][2] or 0 if macros else 0
    kept = ([macros[-1][1]] if macros else []) + [
        content for tier, content, end in rows if tier == SummaryTier.MICRO and (end or 0) > start
    ]
    text = " ".join(part.strip() for part in kept if part and part.strip())
    if len(text) > MAX_SUMMARY_CHARS:
        # The newest part matters most to the next turn.
        text = "…" + text[-(MAX_SUMMARY_CHARS - 1):]
    return text


def visible_rolling_summary(*, workspace, external_id: str, metadata: dict | None, branch_name: str = MAIN_BRANCH) -> str:
    """The branch's rolling summary as a reader may see it (see the module docstring)."""
    scope_id = branch_scope_id(external_id, branch_name)
    if workspace.requires_review:
        return approved_summary(workspace_id=workspace.pk, scope_id=scope_id)
    if branch_name == MAIN_BRANCH:
        value = (metadata or {}).get("summary")
        if isinstance(value, str) and value:
            return value
    state = ScopeState.objects.filter(workspace_id=workspace.pk, scope=Scope.BRANCH,
                                      scope_id=scope_id).values_list("rolling_summary", flat=True).first()
    return state or ""
