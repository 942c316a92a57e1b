/**
 * `MemoryClient`: every REST operation of the service as a method (the Python
 * `memory_client.MemoryClient`'s, in camelCase, each taking one object), async
 * iterators over the paged lists, the spec 000 format conversions and the
 * framework adapter factories.
 */

import * as adapters from "./adapters/plain.js";
import { MemoryServiceError } from "./errors.js";
import * as formats from "./formats.js";
import * as ops from "./operations.js";
import { type Call, RetryPolicy, type TransportOptions, run } from "./transport.js";
import type { ConversationMeta, Message } from "./types.js";
import type { Page } from "./types.js";

export const DEFAULT_TIMEOUT = 30.0;
export const USER_AGENT = "memory-client-node/0.1";

export interface ClientOptions {
  /** The service's URL (`/v1` is added unless it ends with it); default `MEMORY_BASE_URL`. */
  baseUrl?: string;
  /** An API key; default `MEMORY_API_KEY`. */
  apiKey?: string;
  /** Seconds before a request is abandoned. */
  timeout?: number;
  /** Retries of a retryable call (connection failures, 429, 502, 503, 504). */
  maxRetries?: number;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** A `fetch` to send requests with (a test seam); Node's own by default. */
  fetch?: typeof fetch;
}

/** What it takes to send a call: shared by a client and its adapters. */
export class ClientConfig {
  readonly baseUrl: string;
  readonly timeout: number;
  readonly maxRetries: number;
  readonly transport: TransportOptions;

  constructor(options: ClientOptions = {}) {
    const baseUrl = options.baseUrl || process.env.MEMORY_BASE_URL;
    const apiKey = options.apiKey || process.env.MEMORY_API_KEY;
    if (!baseUrl || !apiKey) {
      throw new TypeError("baseUrl and apiKey are required (or set MEMORY_BASE_URL and MEMORY_API_KEY)");
    }
    this.baseUrl = baseUrl;
    this.timeout = options.timeout ?? DEFAULT_TIMEOUT;
    this.maxRetries = options.maxRetries ?? 2;
    const root = baseUrl.replace(/\/+$/, "");
    // Kept out of enumerable fields: configs end up in logs and error reports.
    const headers = { Authorization: `Bearer ${apiKey}`, "User-Agent": USER_AGENT, ...(options.headers ?? {}) };
    this.transport = {
      root: (root.endsWith("/v1") ? root : `${root}/v1`) + "/",
      headers,
      timeoutMs: this.timeout * 1000,
      policy: new RetryPolicy(this.maxRetries),
      fetch: options.fetch,
    };
    Object.defineProperty(this, "transport", { enumerable: false });
  }

  /** The API root (`.../v1`). */
  apiRoot(): string {
    return this.transport.root.replace(/\/$/, "");
  }

  run<T>(call: Call<T>): Promise<T> {
    return run(this.transport, call);
  }
}

type Ops = typeof ops;
type OperationName = {
  [K in keyof Ops]: Ops[K] extends (...args: any[]) => Call<any> ? K : never;
}[keyof Ops];
type Result<C> = C extends Call<infer T> ? T : never;
type Operations = {
  [K in OperationName]: (...args: Parameters<Ops[K]>) => Promise<Result<ReturnType<Ops[K]>>>;
};

/** The names of the REST operations every client has (the Python client's `_operations.PUBLIC`, camelCase). */
export const OPERATIONS = Object.keys(ops).filter(
  (name) => typeof (ops as Record<string, unknown>)[name] === "function",
) as OperationName[];

type Filters = Record<string, any>;

// Declaration merging: the class below gets one method per operation.
export interface MemoryClient extends Operations {}

export class MemoryClient {
  readonly config: ClientConfig;
  #checkpointer?: unknown;
  #store?: unknown;

  constructor(options: ClientOptions = {}) {
    this.config = new ClientConfig(options);
  }

  /** Nothing to release: Node's `fetch` pools its connections per process. Kept for parity. */
  async close(): Promise<void> {}

  // --- Pure conversions (spec 000): no request is made --------------------

  toAnthropicMessages(messages: Iterable<formats.MessageLike>) {
    return formats.toAnthropicMessages(messages);
  }

  toOpenAIInput(messages: Iterable<formats.MessageLike>) {
    return formats.toOpenAIInput(messages);
  }

  toAnthropic(messages: Iterable<formats.MessageLike>) {
    return formats.toAnthropic(messages);
  }

  // --- Iteration over paged lists --------------------------------------------

  /** Every message of a conversation, following the cursor. */
  async *iterMessages(args: ops.GetMessagesArgs & { pageSize?: number }): AsyncGenerator<Message> {
    const { pageSize = 100, ...params } = args;
    let after = params.after ?? null;
    for (;;) {
      const page = await this.getMessagesPage({ ...params, limit: pageSize, after });
      yield* page.data;
      if (!page.nextCursor || !page.data.length) return;
      after = page.nextCursor;
    }
  }

  /** Every conversation, following the cursor. */
  async *iterConversations(args: ops.ListConversationsArgs & { pageSize?: number } = {}): AsyncGenerator<ConversationMeta> {
    const { pageSize = 100, ...params } = args;
    let after = params.after ?? null;
    for (;;) {
      const result = await this.listConversations({ ...params, limit: pageSize, after });
      yield* result.items;
      if (!result.nextCursor || !result.items.length) return;
      after = result.nextCursor;
    }
  }

  /** Every memory (and prefix roll-up) of a store, following `next_page`. */
  async *iterStoreMemories(args: ops.ListStoreMemoriesArgs): AsyncGenerator<Record<string, any>> {
    let pageToken = args.page ?? null;
    for (;;) {
      const page = await this.listStoreMemories({ ...args, page: pageToken });
      yield* page.data;
      if (!page.nextCursor) return;
      pageToken = page.nextCursor;
    }
  }

  async *#iterOffset(list: (args: Filters) => Promise<Page>, args: Filters): AsyncGenerator<Record<string, any>> {
    const { pageSize = 100, ...params } = args;
    let offset = params.offset ?? null;
    for (;;) {
      const page = await list({ ...params, limit: pageSize, offset });
      yield* page.data;
      if (page.nextOffset === null) return;
      offset = page.nextOffset;
    }
  }

  /** Every memory item matching the filters of `listMemories`, page by page (offset pagination). */
  iterMemories(args: Filters & { pageSize?: number } = {}) {
    return this.#iterOffset((a) => this.listMemories(a), args);
  }

  /** Every version of a memory item, page by page. */
  iterMemoryVersions(args: { memoryId: string; pageSize?: number; [filter: string]: unknown }) {
    return this.#iterOffset((a) => this.listMemoryVersions(a as { memoryId: string }), args);
  }

  /** Every edge matching the filters of `listEdges`, page by page. */
  iterEdges(args: Filters & { pageSize?: number } = {}) {
    return this.#iterOffset((a) => this.listEdges(a), args);
  }

  /** Every job matching the filters of `listJobs`, page by page. */
  iterJobs(args: Filters & { pageSize?: number } = {}) {
    return this.#iterOffset((a) => this.listJobs(a), args);
  }

  /** Every scope state matching the filters of `listScopes`, page by page. */
  iterScopes(args: Filters & { pageSize?: number } = {}) {
    return this.#iterOffset((a) => this.listScopes(a), args);
  }

  // --- Framework adapters ------------------------------------------------------

  /** A `SessionStore` of `@anthropic-ai/claude-agent-sdk` (every optional method included). */
  claudeSessionStore() {
    return new adapters.MemorySessionStore(this.config);
  }

  /** A `Session` of `@openai/agents`; `maxItems` is the default `getItems` limit. */
  openaiSession(sessionId: string, options: { maxItems?: number | null } = {}) {
    return new adapters.MemoryOpenAISession(this.config, sessionId, options);
  }

  /** A `BaseCheckpointSaver` of `@langchain/langgraph-checkpoint` with a serializer of one's own. */
  langgraphCheckpointerFor(options: { serde?: any } = {}) {
    return new (langgraph().MemoryCheckpointSaver)(this.config, options);
  }

  /** A `BaseCheckpointSaver` of `@langchain/langgraph-checkpoint` (LangGraph's JSON serializer). */
  get langgraphCheckpointer() {
    this.#checkpointer ??= this.langgraphCheckpointerFor();
    return this.#checkpointer as import("./adapters/langgraph.js").MemoryCheckpointSaver;
  }

  /** A `BaseStore` over the documents of a memory store (by default the workspace's `langgraph` store). */
  langgraphStoreFor(storeId?: string | null, options: { ttl?: { defaultTtl?: number; refreshOnRead?: boolean } } = {}) {
    return new (langgraph().MemoryLangGraphStore)(this.config, { storeId, ...options });
  }

  get langgraphStore() {
    this.#store ??= this.langgraphStoreFor();
    return this.#store as import("./adapters/langgraph.js").MemoryLangGraphStore;
  }

  /** The `memory_20250818` tool of `@anthropic-ai/sdk` (`betaMemoryTool` handlers) backed by a memory store. */
  anthropicMemoryTool(storeId: string) {
    return new adapters.MemoryStoreMemoryTool(this, storeId);
  }
}

for (const name of OPERATIONS) {
  const factory = (ops as unknown as Record<string, (args?: any) => Call>)[name];
  Object.defineProperty(MemoryClient.prototype, name, {
    value: function (this: MemoryClient, args?: any) {
      return this.config.run(factory(args));
    },
    writable: true,
    configurable: true,
  });
}

// The LangGraph adapters extend LangGraph.js classes, so they load only where
// it is installed (the others need no framework to be made).
type LangGraphAdapters = typeof import("./adapters/langgraph.js");
let langgraphAdapters: LangGraphAdapters | MemoryServiceError | undefined;
try {
  langgraphAdapters = await import("./adapters/langgraph.js");
} catch (error) {
  const code = (error as { code?: string }).code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") throw error;
  langgraphAdapters = new MemoryServiceError(
    "the LangGraph adapters need @langchain/langgraph-checkpoint and @langchain/core: npm install them beside memory-client",
    { cause: error },
  );
}

function langgraph(): LangGraphAdapters {
  if (langgraphAdapters instanceof Error) throw langgraphAdapters;
  return langgraphAdapters!;
}
