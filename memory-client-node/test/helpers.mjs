// What the tests share: the live service they run against, and a workspace
// of their own per test file (`MEMORY_TEST_KEYS`: file name -> API key, made
// by the pytest test that starts the service; `MEMORY_API_KEY` otherwise).
import { basename } from "node:path";
import { fileURLToPath } from "node:url";

import { MemoryClient } from "../dist/index.js";

export const baseUrl = process.env.MEMORY_BASE_URL;

export function keyFor(fileUrl) {
  const keys = JSON.parse(process.env.MEMORY_TEST_KEYS ?? "{}");
  const key = keys[basename(fileURLToPath(fileUrl))] ?? process.env.MEMORY_API_KEY;
  if (!baseUrl || !key) throw new Error("MEMORY_BASE_URL and MEMORY_TEST_KEYS (or MEMORY_API_KEY) name the service to test against");
  return key;
}

export function clientFor(fileUrl, options = {}) {
  return new MemoryClient({ baseUrl, apiKey: keyFor(fileUrl), maxRetries: 4, ...options });
}

/** A name no earlier run used (the workspace may be shared with one). */
export function unique(prefix) {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
