// The adapters that need no framework package loaded to be made.
export { MemoryStoreMemoryTool, MemoryToolError } from "./anthropic-memory.js";
export { MemorySessionStore } from "./claude.js";
export { MemoryOpenAISession } from "./openai.js";
