"""Writes to conversations, branches and messages.

Every function is keyword-only and owns its transaction. A write that changes a
conversation's messages or counters first locks the conversation row, so
appends, deletes, clears and forks of one conversation are serialized:
`message_count` and `last_message_at` stay exact, the 10,000-message cap holds
under concurrency, and floor numbers are handed out in commit order (which is
what keeps keyset cursors from skipping a message). What other apps must learn
about these writes they learn from `conversations.hooks`, after the commit.

- `validation`: ids, roles, content, names
- `conversations`: creation, the row lock, metadata, deletion
- `append`: append (one or a batch)
- `messages`: edit, delete, clear
- `branches`: forks, the memory pipeline's progress counters
"""

from conversations.services.append import (
    MAX_MESSAGES_PER_BATCH,
    AppendResult,
    BatchAppendResult,
    NewMessage,
    message_append,
    messages_append,
    new_message,
    new_messages,
)
from conversations.services.branches import branch_create, branch_mark_processed, branch_processed_reset
from conversations.services.conversations import (
    conversation_create,
    conversation_delete,
    conversation_get_or_create,
    conversation_lock,
    conversation_update,
    new_conversation,
)
from conversations.services.messages import message_delete, message_update, messages_clear
from conversations.services.validation import (
    MAX_BRANCH_NAME_CHARS,
    MAX_IDEMPOTENCY_KEY_CHARS,
    MAX_USER_ID_CHARS,
    UNSET,
    content_size,
    validate_conversation_id,
)

__all__ = [
    "MAX_BRANCH_NAME_CHARS",
    "MAX_IDEMPOTENCY_KEY_CHARS",
    "MAX_MESSAGES_PER_BATCH",
    "MAX_USER_ID_CHARS",
    "UNSET",
    "AppendResult",
    "BatchAppendResult",
    "NewMessage",
    "branch_create",
    "branch_mark_processed",
    "branch_processed_reset",
    "content_size",
    "conversation_create",
    "conversation_delete",
    "conversation_get_or_create",
    "conversation_lock",
    "conversation_update",
    "message_append",
    "message_delete",
    "message_update",
    "messages_append",
    "messages_clear",
    "new_conversation",
    "new_message",
    "new_messages",
    "validate_conversation_id",
]
