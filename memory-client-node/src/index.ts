/**
 * Node.js client of the memory service, with adapters for agent frameworks.
 *
 *     import { MemoryClient } from "memory-client";
 *     const memory = new MemoryClient({ baseUrl: "http://127.0.0.1:8000", apiKey: "..." });
 *     await memory.appendMessage({ conversationId: "c1", role: "user", content: "hi" });
 */

export { ClientConfig, DEFAULT_TIMEOUT, MemoryClient, OPERATIONS, USER_AGENT, type ClientOptions } from "./client.js";
export {
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
  errorFor,
} from "./errors.js";
export { toAnthropic, toAnthropicMessages, toOpenAIInput, type MessageLike } from "./formats.js";
export { RetryPolicy, type Call } from "./transport.js";
export { Page, type ConversationMeta, type ListConversationsResult, type Message, type Role } from "./types.js";
export { MemorySessionStore } from "./adapters/claude.js";
export { MemoryOpenAISession } from "./adapters/openai.js";
export { MemoryStoreMemoryTool, MemoryToolError } from "./adapters/anthropic-memory.js";
