/**
 * HTTP plumbing: one description of a call (`Call`), one retry policy, one
 * error mapping, as `memory_client._transport` has them. Requests go through
 * Node's own `fetch` (keep-alive connections, no dependency).
 */

import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";

import { MemoryConnectionError, errorFor, isRecord } from "./errors.js";

/** Methods a retry cannot turn into a second effect. */
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
export const MAX_BACKOFF_SECONDS = 8.0;

/** An answer of the service, its body read once. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The JSON body, or undefined for an empty one (204). */
  json: any;
}

export type QueryValue = string | number | boolean | null | undefined | Array<string | number> | Record<string, unknown>;

export interface Call<T = any> {
  method: string;
  path: string;
  params?: Record<string, QueryValue>;
  json?: unknown;
  headers?: Record<string, string>;
  parse?: (answer: Answer) => T;
  /** undefined: decided by the method (and an Idempotency-Key header). */
  retry?: boolean;
  /** Statuses that are an answer, not an error (e.g. 404 for "absent"). */
  accept?: number[];
}

/** One URL path segment: everything percent-encoded, `/` included. */
export function seg(value: string): string {
  if (typeof value !== "string" || !value) throw new TypeError("path identifiers must be non-empty strings");
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function dataOf(answer: Answer): any {
  const body = answer.json;
  if (body === undefined) return null;
  return isRecord(body) && "data" in body ? body.data : body;
}

export function bodyOf(answer: Answer): any {
  return answer.json === undefined ? null : answer.json;
}

export function nothing(): null {
  return null;
}

export function withIdempotencyKey<T>(call: Call<T>, key?: string | null): Call<T> {
  call.headers = { ...(call.headers ?? {}) };
  if (!("Idempotency-Key" in call.headers)) call.headers["Idempotency-Key"] = key || `mc-${randomUUID().replaceAll("-", "")}`;
  return call;
}

function retryable(call: Call): boolean {
  if (call.retry !== undefined) return call.retry;
  return IDEMPOTENT_METHODS.has(call.method) || "Idempotency-Key" in (call.headers ?? {});
}

export function queryString(params?: Record<string, QueryValue>): string {
  if (!params) return "";
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === null || value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) search.append(name, String(item));
    else if (typeof value === "boolean") search.append(name, value ? "true" : "false");
    // An object filter (`metadata`) travels as JSON.
    else if (typeof value === "object") search.append(name, JSON.stringify(value));
    else search.append(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

export class RetryPolicy {
  constructor(
    readonly maxRetries = 2,
    readonly backoff = 0.25,
  ) {}

  /** Seconds to wait before retry number `attempt`: the server's Retry-After when it sent one. */
  delay(attempt: number, answer?: Answer): number {
    const retryAfter = answer?.headers.get("retry-after");
    if (retryAfter) {
      const seconds = Number(retryAfter);
      if (retryAfter.trim() !== "" && Number.isFinite(seconds)) return Math.min(seconds, MAX_BACKOFF_SECONDS);
    }
    return Math.min(this.backoff * 2 ** attempt, MAX_BACKOFF_SECONDS) * (0.5 + Math.random() / 2);
  }
}

function isQuotaError(answer: Answer): boolean {
  const error = isRecord(answer.json) ? answer.json.error : undefined;
  return isRecord(error) && error.type === "quota_exceeded_error";
}

function shouldRetry(call: Call, attempt: number, policy: RetryPolicy, answer?: Answer): boolean {
  if (attempt >= policy.maxRetries) return false;
  if (answer && answer.headers.get("x-should-retry") === "false") return false;
  // A rate limit refuses before any work is done, so any call may wait and
  // try again; a quota stays exceeded however long one waits.
  if (answer && answer.status === 429) return !isQuotaError(answer);
  return retryable(call);
}

export interface TransportOptions {
  /** The API root, ending with `/v1/`. */
  root: string;
  headers: Record<string, string>;
  timeoutMs: number;
  policy: RetryPolicy;
  fetch?: typeof fetch;
}

async function request(options: TransportOptions, call: Call): Promise<Answer> {
  const url = options.root + call.path.replace(/^\/+/, "") + queryString(call.params);
  const headers: Record<string, string> = { ...options.headers, ...(call.headers ?? {}) };
  let body: string | undefined;
  if (call.json !== undefined) {
    body = JSON.stringify(call.json);
    headers["Content-Type"] = "application/json";
  }
  const response = await (options.fetch ?? fetch)(url, {
    method: call.method,
    headers,
    body,
    signal: AbortSignal.timeout(options.timeoutMs),
  });
  const text = await response.text();
  let json: any;
  if (response.status !== 204 && text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  return { status: response.status, headers: response.headers, text, json };
}

function finish<T>(call: Call<T>, answer: Answer): T {
  if (answer.status >= 400 && !(call.accept ?? []).includes(answer.status)) {
    throw errorFor(answer.status, answer.json === undefined ? answer.text : answer.json);
  }
  return (call.parse ?? dataOf)(answer);
}

/** Runs a call: retried on connection failures and 429/502/503/504 while the policy allows. */
export async function run<T>(options: TransportOptions, call: Call<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    let answer: Answer;
    try {
      answer = await request(options, call);
    } catch (error) {
      if (!shouldRetry(call, attempt, options.policy)) {
        const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        throw new MemoryConnectionError(`${call.method} ${call.path}: ${reason}`, { cause: error });
      }
      await sleep(options.policy.delay(attempt) * 1000);
      continue;
    }
    if (RETRY_STATUSES.has(answer.status) && shouldRetry(call, attempt, options.policy, answer)) {
      await sleep(options.policy.delay(attempt, answer) * 1000);
      continue;
    }
    return finish(call, answer);
  }
}
