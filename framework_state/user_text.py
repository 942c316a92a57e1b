"""Where the framework state keeps user text, for the registry
(`memory_project.user_text`)."""

from memory_project.user_text import Erase, declare

declare("framework_state.AgentSession", erase={"summary": Erase.SCRUB}, no_user_text=["project_key", "session_id"])
declare("framework_state.SessionEntry", erase={"entry": Erase.SCRUB}, no_user_text=["subpath", "uuid"],
        verbatim=["entry"])
# LangGraph's serialized state: opaque blobs, deleted whole.
declare(
    "framework_state.Checkpoint",
    erase={"checkpoint": Erase.DELETE_ROW, "metadata": Erase.DELETE_ROW},
    no_user_text=["checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "run_id"],
    verbatim=["checkpoint"],
)
declare(
    "framework_state.CheckpointWrite",
    erase={"value": Erase.DELETE_ROW},
    no_user_text=["checkpoint_ns", "checkpoint_id", "task_id", "task_path", "channel", "type"],
    verbatim=["value"],
)
