"""Where memories keep user text, for the registry
(`memory_project.user_text`)."""

from memory_project.user_text import Erase, declare, declare_index

IDS_AND_CHOICES = ["id", "scope", "scope_id", "type", "summary_tier", "status", "lifecycle_status", "content_sha256",
                   "source_floor_id", "source_message_id", "sources", "source_memory_ids", "current_version_id"]

declare("memories.MemoryStore", erase={"name": Erase.SCRUB, "description": Erase.SCRUB, "metadata": Erase.SCRUB},
        no_user_text=["id"])
declare(
    "memories.MemoryItem",
    erase={"content": Erase.LINEAGE, "fact_key": Erase.SCRUB, "path": Erase.SCRUB, "metadata": Erase.SCRUB},
    no_user_text=IDS_AND_CHOICES,
    verbatim=["content"],
)
declare(
    "memories.MemoryVersion",
    erase={"content": Erase.LINEAGE, "path": Erase.SCRUB, "attributes": Erase.SCRUB},
    verbatim=["content"],
    no_user_text=["id", "memory_id", "operation", "content_sha256", "actor_type", "actor_api_key_id",
                  "actor_session_id", "actor_job_id", "redacted_by_type", "redacted_by_api_key_id",
                  "redacted_by_session_id", "redacted_by_job_id"],
)
declare("memories.MemoryEdge", no_user_text=["id", "relation"])
# A job's payload and result carry ids and counts, its error a message that
# may quote what failed.
declare(
    "memories.MemoryJob",
    erase={"payload": Erase.SCRUB, "result": Erase.SCRUB, "error": Erase.SCRUB},
    no_user_text=["id", "kind", "scope", "scope_id", "status", "provider"],
)
declare(
    "memories.ScopeState",
    erase={"rolling_summary": Erase.CLEAR},
    no_user_text=["scope", "scope_id", "summarized_until", "rolling_sources"],
)
declare(
    "memories.RecallEntry",
    erase={"terms": Erase.REBUILD, "embedding": Erase.REBUILD},
    no_user_text=["kind", "scope_token", "branch_id", "message_id", "embedding_model", "content_sha256"],
)
declare_index("memories_memoryitem_fts", source="memories.MemoryItem.content")
declare_index("memories_recallentry_fts", source="memories.RecallEntry.terms")
# Per-scope counters of the recall index.
declare("memories.RecallScopeStats", no_user_text=["scope_token"])
# Per-scope document counts of the index's terms: a row goes with the last
# entry holding its term (see memories/recall/stats.py).
declare("memories.RecallTermStats", erase={"term": Erase.REBUILD}, no_user_text=["scope_token"])
declare(
    "memories.ConversationResource",
    erase={"instructions": Erase.SCRUB, "store_name": Erase.SCRUB, "store_description": Erase.SCRUB},
    no_user_text=["access", "mount_path"],
)
