// One turn of a LangGraph.js chat graph on a thread of the service, for the
// Python <-> Node resume test (tests/memory_client_node/test_interop.py):
//   node test/interop/langgraph-turn.mjs THREAD "user text" "scripted reply"
// Prints one JSON line: the messages the model was shown, as [type, text].
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";

import { MemoryClient } from "../../dist/index.js";
import { ScriptedChatModel } from "../scripted-model.mjs";

const [thread, text, reply] = process.argv.slice(2);
const memory = new MemoryClient({ maxRetries: 4 });
const model = new ScriptedChatModel([new AIMessage(reply)]);
const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addEdge("__start__", "agent")
  .compile({ checkpointer: memory.langgraphCheckpointer });
await graph.invoke({ messages: [new HumanMessage(text)] }, { configurable: { thread_id: thread } });
console.log(JSON.stringify({ seen: model.seen[0].map((m) => [m.getType(), m.content]) }));
