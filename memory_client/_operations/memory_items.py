"""Memory items, edges, jobs, scopes (spec 003), each operation described once as a `Call`.

Lists are offset pages (`meta.total/limit/offset`); see `Page.next_offset`.
PATCH bodies set absolute values (a repeat changes nothing more), so they are
retried; POSTs that add a version or queue work again (restore, job retry,
rebuild, compact) are not.
"""

from __future__ import annotations

from typing import Any

from memory_client._transport import (
    Call,
    page_of,
    seg,
)


def list_memories(**params: Any) -> Call:
    """A `Page` of memories. Filters: user_id (with include_conversations),
    conversation_id, scope, scope_id, type, status, lifecycle_status,
    fact_key, metadata (a dict: each key with that value), q,
    importance_min ..., sort_by, sort_order, limit, offset. An unknown filter
    is refused (MemoryValidationError), never ignored."""
    return Call("GET", "memories", params=params, parse=page_of)


def search_memories(*, query: str, user_id: str | None = None, conversation_id: str | None = None,
                    **params: Any) -> Call:
    """A `Page` of the memories most relevant to `query` (by meaning and
    words, as the recall index ranks them), best first, each with its
    `score`; in a user's scope (`user_id`), a conversation's
    (`conversation_id`) or `scope` + `scope_id`. Other list filters apply."""
    return Call("GET", "memories", params={"query": query, "user_id": user_id,
                                           "conversation_id": conversation_id, **params}, parse=page_of)


def delete_user_memories(*, user_id: str, include_conversations: bool = False) -> Call:
    """Delete every memory of a user, following lineage:
    `{"user_id", "deleted", "ids"}` (the response's `lineage` says what was
    erased with them). Deleting twice deletes nothing more, so it is retried."""
    return Call("DELETE", "memories", params={"user_id": user_id, "include_conversations": include_conversations},
                retry=True)


def create_memory(*, scope: str, type: str, content: Any, **fields: Any) -> Call:
    return Call("POST", "memories", json={"scope": scope, "type": type, "content": content, **fields})


def get_memory(*, memory_id: str) -> Call:
    return Call("GET", f"memories/{seg(memory_id)}")


def update_memory(*, memory_id: str, **changes: Any) -> Call:
    """Changes plus optional `expected_version` / `expected_content_sha256`
    (409 `memory_precondition_failed` when stale)."""
    return Call("PATCH", f"memories/{seg(memory_id)}", json=changes, retry=True)


def delete_memory(*, memory_id: str) -> Call:
    """`{"id", "deleted": True}`."""
    return Call("DELETE", f"memories/{seg(memory_id)}")


def memory_stats(**params: Any) -> Call:
    """Totals over the same filters as `list_memories`."""
    return Call("GET", "memories/stats", params=params)


def batch_update_memory_status(*, ids: list[str], status: str) -> Call:
    """`{"results": [{"id", "result", "changed"?}], "meta": {counts}}`."""
    return Call("PATCH", "memories/batch/status", json={"ids": ids, "status": status}, retry=True)


def batch_delete_memories(*, ids: list[str]) -> Call:
    """`{"results": [{"id", "result"}], "meta": {counts}}`. Deleting twice removes
    nothing more (a repeat reports the ids `not_found`), so it is retried."""
    return Call("POST", "memories/batch/delete", json={"ids": ids}, retry=True)


def list_memory_versions(*, memory_id: str, **params: Any) -> Call:
    return Call("GET", f"memories/{seg(memory_id)}/versions", params=params, parse=page_of)


def get_memory_version(*, memory_id: str, version_id: str) -> Call:
    return Call("GET", f"memories/{seg(memory_id)}/versions/{seg(version_id)}")


def redact_memory_version(*, memory_id: str, version_id: str) -> Call:
    """Erases the version's content (idempotent: a redacted version stays redacted)."""
    return Call("POST", f"memories/{seg(memory_id)}/versions/{seg(version_id)}/redact", retry=True)


def restore_memory(*, memory_id: str, version_id: str) -> Call:
    """Writes the version's content back as a new version: not retried, since a
    repeat would add another."""
    return Call("POST", f"memories/{seg(memory_id)}/restore", json={"version_id": version_id}, retry=False)


def list_edges(**params: Any) -> Call:
    """Filters: from_id, to_id, relation, sort_order, limit, offset."""
    return Call("GET", "memory_edges", params=params, parse=page_of)


def create_edge(*, from_id: str, to_id: str, relation: str) -> Call:
    return Call("POST", "memory_edges", json={"from_id": from_id, "to_id": to_id, "relation": relation})


def get_edge(*, edge_id: str) -> Call:
    return Call("GET", f"memory_edges/{seg(edge_id)}")


def update_edge(*, edge_id: str, relation: str) -> Call:
    return Call("PATCH", f"memory_edges/{seg(edge_id)}", json={"relation": relation}, retry=True)


def delete_edge(*, edge_id: str) -> Call:
    """`{"id", "deleted": True}`."""
    return Call("DELETE", f"memory_edges/{seg(edge_id)}")


def list_jobs(**params: Any) -> Call:
    """Filters: scope, scope_id, status, kind, limit, offset (newest first)."""
    return Call("GET", "memory_jobs", params=params, parse=page_of)


def get_job(*, job_id: str) -> Call:
    return Call("GET", f"memory_jobs/{seg(job_id)}")


def retry_job(*, job_id: str) -> Call:
    """A failed or cancelled job goes back to pending. Not retried: a repeat could
    run the job a second time once the first retry has failed again."""
    return Call("POST", f"memory_jobs/{seg(job_id)}/retry", retry=False)


def cancel_job(*, job_id: str) -> Call:
    """Cancels a pending job, or asks a running one to stop. A repeat asks for the
    same end state, so it is retried (it may answer 409 once cancelled)."""
    return Call("POST", f"memory_jobs/{seg(job_id)}/cancel", retry=True)


def list_scopes(**params: Any) -> Call:
    """Scope states; filters: scope, scope_id, dirty, limit, offset."""
    return Call("GET", "memory_scopes", params=params, parse=page_of)


def rebuild_scope(*, scope: str, scope_id: str) -> Call:
    """Queues a rebuild of a branch scope; returns the (pending) job."""
    return Call("POST", "memory_scopes/rebuild", json={"scope": scope, "scope_id": scope_id}, retry=False)


def compact_scope(*, scope: str, scope_id: str = "") -> Call:
    """Queues a compaction of the scope's micro summaries; returns the job."""
    return Call("POST", "memory_scopes/compact", json={"scope": scope, "scope_id": scope_id}, retry=False)


PUBLIC = [name for name, value in list(globals().items()) if callable(value) and not name.startswith("_")
          and getattr(value, "__module__", None) == __name__]
__all__ = PUBLIC
