"""Python client of the memory service, with adapters for agent frameworks.

    from memory_client import MemoryClient
    client = MemoryClient("http://127.0.0.1:8000", api_key="...")
    client.append_message(conversation_id="c1", role="user", content="hi")

Imports nothing from Django; the frameworks' packages are optional extras.
"""

from memory_client.client import AsyncMemoryClient, ClientConfig, MemoryClient
from memory_client.errors import (
    MemoryAuthenticationError,
    MemoryConflictError,
    MemoryConnectionError,
    MemoryNotFoundError,
    MemoryPermissionError,
    MemoryQuotaExceededError,
    MemoryRateLimitError,
    MemoryServerError,
    MemoryServiceError,
    MemoryValidationError,
)
from memory_client.formats import to_anthropic, to_anthropic_messages, to_openai_input
from memory_client.types import ConversationMeta, ListConversationsResult, Message, Page

__all__ = [
    "AsyncMemoryClient",
    "ClientConfig",
    "ConversationMeta",
    "ListConversationsResult",
    "MemoryAuthenticationError",
    "MemoryClient",
    "MemoryConflictError",
    "MemoryConnectionError",
    "MemoryNotFoundError",
    "MemoryPermissionError",
    "MemoryQuotaExceededError",
    "MemoryRateLimitError",
    "MemoryServerError",
    "MemoryServiceError",
    "MemoryValidationError",
    "Message",
    "Page",
    "to_anthropic",
    "to_anthropic_messages",
    "to_openai_input",
]
__version__ = "0.1.0"
