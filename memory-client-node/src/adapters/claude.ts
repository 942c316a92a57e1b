/**
 * `SessionStore` of `@anthropic-ai/claude-agent-sdk` over the memory service,
 * sharing its data with the Python adapter (`memory_client.adapters.claude`):
 * each `(projectKey, sessionId)` is a conversation, entries travel verbatim,
 * and the summary sidecar is kept in the Python SDK's shape (snake_case keys),
 * so a session written from either language lists, loads and folds in the
 * other. The sidecar is folded here with the SDK's own `foldSessionSummary`
 * and written with the entries in one request, under the summary's version:
 * a concurrent writer makes the request fail with 409 and nothing is written,
 * so the fold is redone on fresh state.
 */

import type { SessionKey, SessionStore, SessionStoreEntry, SessionSummaryEntry } from "@anthropic-ai/claude-agent-sdk";

import type { ClientConfig } from "../client.js";
import { MemoryConflictError } from "../errors.js";
import { camel, snake } from "../names.js";
import { nothing } from "../transport.js";

export const MAX_FOLD_ATTEMPTS = 5;

type Json = Record<string, any>;
type StoredSummary = { session_id: string; mtime: number; data: Json } | null;


function renameKeys(data: Json, rename: (name: string) => string): Json {
  return Object.fromEntries(Object.entries(data ?? {}).map(([key, value]) => [rename(key), value]));
}

/** The stored (Python-shaped) sidecar as the Node SDK holds it. */
function toNode(summary: StoredSummary): SessionSummaryEntry | undefined {
  if (!summary) return undefined;
  return { sessionId: summary.session_id, mtime: summary.mtime, data: renameKeys(summary.data, camel) };
}

function keyBody(key: SessionKey): Json {
  const body: Json = { project_key: key.projectKey, session_id: key.sessionId };
  if (key.subpath !== undefined && key.subpath !== null) body.subpath = key.subpath;
  return body;
}

let fold: typeof import("@anthropic-ai/claude-agent-sdk").foldSessionSummary | undefined;

async function foldSessionSummary(prev: SessionSummaryEntry | undefined, key: SessionKey, entries: SessionStoreEntry[]) {
  // The SDK is loaded on the first fold, not with the client: it is an optional peer.
  fold ??= (await import("@anthropic-ai/claude-agent-sdk")).foldSessionSummary;
  return fold(prev, key, entries);
}

export class MemorySessionStore implements SessionStore {
  readonly #config: ClientConfig;
  // "projectKey\0sessionId" -> [summary, version] last seen: saves a read per append.
  readonly #summaries = new Map<string, [StoredSummary, number]>();
  // Appends to one session run one after another (the SessionStore contract).
  readonly #tails = new Map<string, Promise<unknown>>();

  constructor(config: ClientConfig) {
    this.#config = config;
  }

  async #summary(projectKey: string, sessionId: string): Promise<[StoredSummary, number]> {
    const cached = this.#summaries.get(`${projectKey}\0${sessionId}`);
    if (cached) return cached;
    const data: Json = await this.#config.run({
      method: "GET", path: "claude_sessions/summary", params: { project_key: projectKey, session_id: sessionId },
    });
    return [data.summary, data.summary_version];
  }

  async append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    if (!entries.length) return;
    const body: Json = { ...keyBody(key), entries: [...entries] };
    if (key.subpath !== undefined && key.subpath !== null) {
      // No summary for subagent streams: one request, uuids make a replay harmless.
      await this.#config.run({ method: "POST", path: "claude_sessions/append", json: body, retry: true });
      return;
    }
    const ident = `${key.projectKey}\0${key.sessionId}`;
    const previous = this.#tails.get(ident) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.#appendFolded(key, ident, body, entries));
    this.#tails.set(ident, next);
    try {
      await next;
    } finally {
      if (this.#tails.get(ident) === next) this.#tails.delete(ident);
    }
  }

  async #appendFolded(key: SessionKey, ident: string, body: Json, entries: SessionStoreEntry[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const [previous, version] = await this.#summary(key.projectKey, key.sessionId);
      const folded = await foldSessionSummary(toNode(previous), key, entries);
      body.summary = { data: renameKeys(folded.data, snake), expected_version: version };
      try {
        const result: Json = await this.#config.run({ method: "POST", path: "claude_sessions/append", json: body, retry: false });
        this.#summaries.set(ident, [result.summary, result.summary_version]);
        return;
      } catch (error) {
        if (!(error instanceof MemoryConflictError)) throw error;
        this.#summaries.delete(ident);
        if (attempt === MAX_FOLD_ATTEMPTS - 1) throw error;
      }
    }
  }

  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    return this.#config.run({ method: "GET", path: "claude_sessions/entries", params: keyBody(key) });
  }

  async listSessions(projectKey: string): Promise<Array<{ sessionId: string; mtime: number }>> {
    const rows: Json[] = await this.#config.run({ method: "GET", path: "claude_sessions", params: { project_key: projectKey } });
    return rows.map((row) => ({ sessionId: row.session_id, mtime: row.mtime }));
  }

  async listSessionSummaries(projectKey: string): Promise<SessionSummaryEntry[]> {
    const rows: StoredSummary[] = await this.#config.run({
      method: "GET", path: "claude_sessions/summaries", params: { project_key: projectKey },
    });
    return rows.map((row) => toNode(row)!);
  }

  async delete(key: SessionKey): Promise<void> {
    // Deleting twice is deleting once: safe to retry.
    await this.#config.run({ method: "POST", path: "claude_sessions/delete", json: keyBody(key), parse: nothing, retry: true });
    if (key.subpath === undefined || key.subpath === null) this.#summaries.delete(`${key.projectKey}\0${key.sessionId}`);
  }

  async listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]> {
    return this.#config.run({
      method: "GET", path: "claude_sessions/subkeys", params: { project_key: key.projectKey, session_id: key.sessionId },
    });
  }
}
