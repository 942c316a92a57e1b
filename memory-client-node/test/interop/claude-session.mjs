// The Claude session store from Node, for the Python <-> Node sharing test
// (tests/memory_client_node/test_interop.py):
//   node test/interop/claude-session.mjs PROJECT_KEY SESSION_ID ENTRIES_JSON
// Loads the session, appends the given entries, and prints one JSON line:
// what it loaded before appending, the sessions listed and their summaries.
import { MemoryClient } from "../../dist/index.js";

const [projectKey, sessionId, entries] = process.argv.slice(2);
const store = new MemoryClient({ maxRetries: 4 }).claudeSessionStore();
const loaded = await store.load({ projectKey, sessionId });
await store.append({ projectKey, sessionId }, JSON.parse(entries));
console.log(JSON.stringify({
  loaded,
  sessions: await store.listSessions(projectKey),
  summaries: await store.listSessionSummaries(projectKey),
}));
