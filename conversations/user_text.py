"""Where conversations keep user text, for the registry
(`memory_project.user_text`)."""

from memory_project.user_text import Erase, declare

declare(
    "conversations.Conversation",
    # The caller's ids name things (a session, a user) and are the keys
    # erasure works by: they are ids, not text to redact.
    erase={"metadata": Erase.SCRUB},
    no_user_text=["external_id", "user_id", "source"],
)
declare("conversations.Branch", no_user_text=["id", "name", "fork_message_id"])
declare(
    "conversations.Message",
    erase={"content": Erase.LINEAGE, "metadata": Erase.SCRUB},
    no_user_text=["id", "role", "idempotency_key"],
)
declare(
    "conversations.ConversationResource",
    erase={"instructions": Erase.SCRUB, "store_name": Erase.SCRUB, "store_description": Erase.SCRUB},
    no_user_text=["access", "mount_path"],
)
declare("conversations.AgentSession", erase={"summary": Erase.SCRUB}, no_user_text=["project_key", "session_id"])
declare("conversations.SessionEntry", erase={"entry": Erase.SCRUB}, no_user_text=["subpath", "uuid"])
# LangGraph's serialized state: opaque blobs, deleted whole.
declare(
    "conversations.Checkpoint",
    erase={"checkpoint": Erase.DELETE_ROW, "metadata": Erase.DELETE_ROW},
    no_user_text=["checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "run_id"],
)
declare(
    "conversations.CheckpointWrite",
    erase={"value": Erase.DELETE_ROW},
    no_user_text=["checkpoint_ns", "checkpoint_id", "task_id", "task_path", "channel", "type"],
)
