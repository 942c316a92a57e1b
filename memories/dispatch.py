"""Celery dispatch from the services: the one module that sends the memory
tasks. The tasks call the services that dispatch them, so `memories.tasks` is
imported when a task is sent (Celery task dispatch), not when this module
loads: a module-level import would close an import circle. Each function
sends at once; callers bind ids eagerly and call it from
`transaction.on_commit`."""

from __future__ import annotations

from types import ModuleType


def _tasks() -> ModuleType:
    # Celery task dispatch: `memories.tasks` imports the services that call
    # this module.
    import memories.tasks as tasks

    return tasks


def memory_job_send(job_id: str, *, redispatch: bool = False) -> None:
    """Run the memory job on a worker; `redispatch` marks a message sent again
    for a pending job whose first one may be lost."""
    if redispatch:
        _tasks().process_memory_job_task.delay(job_id, redispatch=True)
    else:
        _tasks().process_memory_job_task.delay(job_id)


def recall_embed_send(workspace_id) -> None:
    """Embed the workspace's recall entries that have no vector yet."""
    _tasks().embed_recall_entries_task.delay(workspace_id)


def lineage_erase_send(signal_name: str, event: dict) -> None:
    """Run a lineage erasure again on a worker, from its event as a plain dict."""
    _tasks().erase_lineage_task.delay(signal_name, event)
