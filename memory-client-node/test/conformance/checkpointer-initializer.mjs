// The initializer `@langchain/langgraph-checkpoint-validation` runs the
// checkpointer's conformance suite with (`validate-checkpointer <this file>`).
// Each checkpointer starts on an empty store: the suite's `list` tests see
// every thread, so whatever an earlier instance wrote is deleted first.
import { MemoryClient } from "../../dist/index.js";

async function emptied(checkpointer) {
  const threads = new Set();
  for await (const tuple of checkpointer.list({})) threads.add(tuple.config.configurable.thread_id);
  await Promise.all([...threads].map((thread) => checkpointer.deleteThread(thread)));
  return checkpointer;
}

export default {
  checkpointerName: "memory-client-node MemoryCheckpointSaver",
  async createCheckpointer() {
    const client = new MemoryClient({ baseUrl: process.env.MEMORY_BASE_URL, apiKey: process.env.MEMORY_API_KEY, maxRetries: 4 });
    return emptied(client.langgraphCheckpointerFor());
  },
  async destroyCheckpointer(checkpointer) {
    await emptied(checkpointer);
  },
};
