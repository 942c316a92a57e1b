// The README's Node examples run as written against the live service: the
// client block and the MCP block (the DeepAgents block needs a model of one's own).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { it } from "node:test";

import { baseUrl, keyFor } from "./helpers.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const readme = readFileSync(join(root, "..", "README.md"), "utf8");
const section = readme.slice(readme.indexOf("## The Node.js client"), readme.indexOf("## MCP: memory for any agent"));
const blocks = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

function runs(code) {
  // Inside the package, "memory-client" is the package itself (its exports map).
  const dir = mkdtempSync(join(root, "test", ".readme-"));
  try {
    const file = join(dir, "example.mjs");
    writeFileSync(file, code);
    return spawnSync(process.execPath, [file], {
      cwd: root, encoding: "utf8", timeout: 60_000,
      env: { ...process.env, MEMORY_BASE_URL: baseUrl, MEMORY_API_KEY: keyFor(import.meta.url) },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

it("runs the README's client example", () => {
  const example = blocks.find((b) => b.includes("new MemoryClient"));
  const run = runs(example);
  assert.equal(run.status, 0, run.stderr);
});

it("runs the README's MCP example", () => {
  const example = blocks.find((b) => b.includes("StreamableHTTPClientTransport"));
  const run = runs(`${example}\nif (!JSON.stringify(recalled).includes("aisle")) process.exit(3);\nawait mcp.close();\n`);
  assert.equal(run.status, 0, run.stderr);
});
