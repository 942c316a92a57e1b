// The framework conformance suite named by the package's promise: LangGraph.js's
// own checkpointer validation (@langchain/langgraph-checkpoint-validation,
// unmodified), run by vitest, the runner it is written for, against the live
// service this test run was given.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { it } from "node:test";

import { keyFor } from "./helpers.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

it("the checkpointer passes @langchain/langgraph-checkpoint-validation", () => {
  const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
  const run = spawnSync(process.execPath, [vitest, "run", "--globals", "--root", root, "--reporter=dot",
    "test/conformance/checkpointer.validation.test.mjs"], {
    cwd: root, env: { ...process.env, MEMORY_API_KEY: keyFor(import.meta.url), CI: "true", NO_COLOR: "1", FORCE_COLOR: "0" }, encoding: "utf8", timeout: 240_000,
  });
  const output = `${run.stdout}\n${run.stderr}`;
  assert.equal(run.status, 0, output.slice(-6000));
  const summary = output.match(/Tests\s+(\d+) passed \((\d+)\)/);
  // every test of the suite ran and passed (none skipped)
  assert.ok(summary && summary[1] === summary[2] && Number(summary[1]) > 700, output.slice(-2000));
});
