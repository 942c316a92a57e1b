"""Batch actions over memory items, run through the batch services in chunks
of their maximum size, one chunk per workspace at a time (the services lock
one workspace's rows per transaction)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from accounts.actors import Actor
from accounts.models import Workspace
from memories.admin.outcomes import Outcome
from memories.services.items_batch import (
    MAX_BATCH_IDS,
    memory_items_set_lifecycle,
    memory_items_set_status,
)
from memories.services.lineage.erase import memories_delete_following_lineage
from memory_project.errors import DomainError


def ids_by_workspace(rows: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """(pk, workspace id) rows as the pks of each workspace."""
    groups: dict[str, list[str]] = defaultdict(list)
    for pk, workspace_id in rows:
        groups[workspace_id].append(pk)
    return groups


def _run(queryset, outcome: Outcome, call: Callable[[Workspace, list[str]], object], tally) -> Outcome:
    groups = ids_by_workspace(queryset.order_by().values_list("pk", "workspace_id"))
    workspaces = Workspace.objects.in_bulk(list(groups))
    for workspace_id, ids in groups.items():
        for start in range(0, len(ids), MAX_BATCH_IDS):
            chunk = ids[start : start + MAX_BATCH_IDS]
            try:
                result = call(workspaces[workspace_id], chunk)
            except DomainError as error:
                # A chunk is one transaction: when it is refused, none of it changed.
                outcome.failed += len(chunk)
                outcome.reasons[error.message] += 1
                continue
            tally(outcome, result)
    return outcome


def _tally_status(outcome: Outcome, result) -> None:
    for row in result.results:
        if row["result"] == "not_found":
            outcome.failed += 1
            outcome.reasons["Memory no longer exists."] += 1
        elif row.get("changed"):
            outcome.succeeded += 1
        else:
            outcome.skipped += 1


def _tally_delete(outcome: Outcome, result) -> None:
    for row in result.results:
        if row["result"] == "deleted":
            outcome.succeeded += 1
        else:
            outcome.skipped += 1


def set_status(queryset, *, actor: Actor, status: str, verb: str) -> Outcome:
    return _run(
        queryset,
        Outcome(verb),
        lambda workspace, ids: memory_items_set_status(workspace=workspace, actor=actor, ids=ids, status=status),
        _tally_status,
    )


def set_lifecycle(queryset, *, actor: Actor, lifecycle_status: str, verb: str) -> Outcome:
    return _run(
        queryset,
        Outcome(verb),
        lambda workspace, ids: memory_items_set_lifecycle(
            workspace=workspace, actor=actor, ids=ids, lifecycle_status=lifecycle_status
        ),
        _tally_status,
    )


def delete(queryset, *, actor: Actor) -> Outcome:
    """Deletes follow lineage: summaries compacted from a deleted memory go too."""

    return _run(
        queryset,
        Outcome("Delete"),
        lambda workspace, ids: memories_delete_following_lineage(workspace=workspace, actor=actor, ids=ids)[0],
        _tally_delete,
    )
