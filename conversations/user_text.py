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
    verbatim=["content"],
)
