// LangGraph.js's 10-step run on this package's checkpointer beside LangGraph.js's
// own PostgreSQL saver (@langchain/langgraph-checkpoint-postgres), interleaved
// round by round so both see the same machine load. Run by bench/adapters_node.py:
//   node bench/langgraph-checkpointer.mjs SAVER_POSTGRES_URL
// with MEMORY_BASE_URL / MEMORY_API_KEY naming the service (itself on PostgreSQL).
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";

import { MemoryClient } from "../dist/index.js";

const STEPS = 10;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const RUNS_PER_ROUND = Number(process.env.BENCH_RUNS ?? 5);

const State = Annotation.Root({ log: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }) });

function graph(checkpointer) {
  let builder = new StateGraph(State);
  for (let i = 0; i < STEPS; i++) builder = builder.addNode(`s${i}`, () => ({ log: [`s${i}`] }));
  builder = builder.addEdge(START, "s0");
  for (let i = 1; i < STEPS; i++) builder = builder.addEdge(`s${i - 1}`, `s${i}`);
  return builder.addEdge(`s${STEPS - 1}`, END).compile({ checkpointer });
}

async function runs(app, round, label) {
  const start = performance.now();
  for (let run = 0; run < RUNS_PER_ROUND; run++) {
    // A few threads, each growing: a resumed thread reads its latest checkpoint first.
    await app.invoke({ log: [`in${round}.${run}`] }, { configurable: { thread_id: `${label}-${run % 4}` } });
  }
  return performance.now() - start;
}

const saver = PostgresSaver.fromConnString(process.argv[2]);
await saver.setup();
const ours = graph(new MemoryClient({ maxRetries: 4 }).langgraphCheckpointer);
const theirs = graph(saver);
// Warm both (connections, prepared plans, imports) before timing.
await runs(ours, -1, "warm");
await runs(theirs, -1, "warm");

let oursMs = 0;
let theirsMs = 0;
for (let round = 0; round < ROUNDS; round++) {
  oursMs += await runs(ours, round, "bench");
  theirsMs += await runs(theirs, round, "bench");
}
await saver.end();
const total = ROUNDS * RUNS_PER_ROUND;
const ratio = theirsMs / oursMs;
console.log(`langgraphjs ${STEPS}-step runs: memory checkpointer ${(total / (oursMs / 1000)).toFixed(1)} runs/s, ` +
  `PostgresSaver ${(total / (theirsMs / 1000)).toFixed(1)} runs/s (${total} runs each, interleaved)`);
console.log(JSON.stringify({ ratio }));
