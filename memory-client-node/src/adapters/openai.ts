/**
 * `Session` of `@openai/agents` over the memory service, as the Python
 * adapter (`memory_client.adapters.openai_agents`) keeps it: the session id is
 * a conversation id and its items are the conversation's messages; `addItems`
 * appends a batch atomically (all or none, in order), up to 1000 items and
 * 50 MB (more go in several such batches).
 */

import { randomUUID } from "node:crypto";

import type { ClientConfig } from "../client.js";
import { nothing, seg, withIdempotencyKey } from "../transport.js";

// The most items the service adds in one request, and the most bytes of them
// sent in one (the service refuses a body over 52 MB).
export const ITEMS_PER_REQUEST = 1000;
export const BYTES_PER_REQUEST = 50 * 1024 * 1024;

/** Items in consecutive groups of at most `ITEMS_PER_REQUEST` whose JSON stays
 * within `BYTES_PER_REQUEST`; an item larger than that goes alone. */
function* requests<T>(items: T[]): Generator<T[]> {
  let group: T[] = [];
  let size = 0;
  for (const item of items) {
    const itemSize = Buffer.byteLength(JSON.stringify(item)) + 1;
    if (group.length && (group.length === ITEMS_PER_REQUEST || size + itemSize > BYTES_PER_REQUEST)) {
      yield group;
      group = [];
      size = 0;
    }
    group.push(item);
    size += itemSize;
  }
  if (group.length) yield group;
}

export interface SessionSettings {
  limit?: number;
}

/** Implements the `Session` interface of `@openai/agents` (getSessionId, getItems, addItems, popItem, clearSession). */
export class MemoryOpenAISession {
  readonly sessionId: string;
  readonly sessionSettings?: SessionSettings;
  readonly #config: ClientConfig;
  readonly #path: string;

  constructor(config: ClientConfig, sessionId: string, options: { maxItems?: number | null; sessionSettings?: SessionSettings } = {}) {
    this.sessionId = sessionId;
    this.sessionSettings = options.sessionSettings ?? (options.maxItems != null ? { limit: options.maxItems } : undefined);
    this.#config = config;
    this.#path = `openai_sessions/${seg(sessionId)}/items`;
  }

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  /** The latest `limit` items in order (all of them without a limit); a negative limit means no limit. */
  async getItems(limit?: number): Promise<any[]> {
    const effective = limit ?? this.sessionSettings?.limit;
    if (effective === 0) return [];
    const params = effective !== undefined && effective !== null && effective > 0 ? { limit: effective } : undefined;
    return this.#config.run({ method: "GET", path: this.#path, params });
  }

  /** The items in order: all or none when they fit one request; more go in
   * several requests, each all or none, so one that fails leaves the earlier ones added. */
  async addItems(items: any[]): Promise<void> {
    for (const group of requests([...items])) {
      // The key makes a retried batch a replay on the server, never a second copy.
      const call = withIdempotencyKey(
        { method: "POST", path: this.#path, json: { items: group }, parse: nothing },
        `oais-${randomUUID().replaceAll("-", "")}`,
      );
      await this.#config.run(call);
    }
  }

  async popItem(): Promise<any | undefined> {
    // Not retried: a pop that reached the server must not pop twice.
    const item = await this.#config.run({ method: "POST", path: `${this.#path}/pop`, retry: false });
    return item ?? undefined;
  }

  async clearSession(): Promise<void> {
    await this.#config.run({ method: "DELETE", path: this.#path, parse: nothing });
  }
}
