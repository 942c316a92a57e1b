// LangGraph.js on the service: a graph that resumes its thread from a new
// saver (a new process, in effect), the store's BaseStore operations, and a
// DeepAgents agent on the checkpointer + store pair with its files in a
// memory store.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { createDeepAgent, StoreBackend } from "deepagents";

import { ScriptedChatModel } from "./scripted-model.mjs";
import { clientFor, unique } from "./helpers.mjs";

const memory = clientFor(import.meta.url);

function chatGraph(model, checkpointer) {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addEdge("__start__", "agent")
    .compile({ checkpointer });
}

describe("langgraphCheckpointer", () => {
  it("resumes a thread from another saver and keeps its history", async () => {
    const thread = { configurable: { thread_id: unique("thread") } };
    const first = chatGraph(new ScriptedChatModel([new AIMessage("Hi Ana.")]), memory.langgraphCheckpointer);
    await first.invoke({ messages: [new HumanMessage("I am Ana.")] }, thread);
    const model = new ScriptedChatModel([new AIMessage("You are Ana.")]);
    const again = chatGraph(model, clientFor(import.meta.url).langgraphCheckpointerFor());
    const state = await again.invoke({ messages: [new HumanMessage("Who am I?")] }, thread);
    assert.deepEqual(model.seen[0].map((m) => m.content), ["I am Ana.", "Hi Ana.", "Who am I?"]);
    assert.equal(state.messages.at(-1).content, "You are Ana.");
    const history = [];
    for await (const snapshot of again.getStateHistory(thread)) history.push(snapshot.values.messages?.length ?? 0);
    assert.ok(history.length >= 4);
    assert.equal(history[0], 4);
    await memory.langgraphCheckpointer.deleteThread(thread.configurable.thread_id);
    assert.equal(await memory.langgraphCheckpointer.getTuple(thread), undefined);
  });
});

describe("langgraphStore", () => {
  it("puts, gets, searches, lists namespaces and deletes, in one batch or op by op", async () => {
    const store = memory.langgraphStore;
    const user = unique("user");
    await store.put([user, "prefs"], "drink", { text: "prefers green tea in the morning", kind: "pref" });
    await store.put([user, "prefs"], "city", { text: "lives in Lisbon near the river", kind: "fact" });
    await store.put([user, "trips", "2026"], "may", { text: "flies to Porto on May 3", kind: "plan" });
    const item = await store.get([user, "prefs"], "drink");
    assert.equal(item.value.text, "prefers green tea in the morning");
    assert.ok(item.createdAt instanceof Date);

    const facts = await store.search([user], { filter: { kind: "fact" } });
    assert.deepEqual(facts.map((i) => i.key), ["city"]);
    const found = await store.search([user], { query: "green tea" });
    assert.equal(found[0].key, "drink");
    assert.ok(found[0].score > 0);

    const namespaces = await store.listNamespaces({ prefix: [user] });
    assert.deepEqual(namespaces.map((n) => n.join("/")).sort(), [`${user}/prefs`, `${user}/trips/2026`]);
    assert.deepEqual(await store.listNamespaces({ prefix: [user], maxDepth: 2 }).then((n) => n.map((x) => x.join("/")).sort()),
      [`${user}/prefs`, `${user}/trips`]);

    const results = await store.batch([
      { namespace: [user, "prefs"], key: "drink" },
      { namespace: [user, "prefs"], key: "drink", value: null },
      { namespace: [user, "prefs"], key: "drink" },
    ]);
    assert.equal(results[0].key, "drink");
    assert.equal(results[2], null);
    await assert.rejects(store.put([], "k", { a: 1 }));
  });

  it("keeps items as documents of the workspace's langgraph memory store", async () => {
    const user = unique("doc");
    await memory.langgraphStore.put([user, "notes"], "n1", { text: "hello" });
    const store = (await memory.listStores()).data.find((s) => s.name === "langgraph");
    const paths = [];
    for await (const m of memory.iterStoreMemories({ storeId: store.id, pathPrefix: `/${user}/` })) paths.push(m.path);
    assert.deepEqual(paths, [`/${user}/notes/n1`]);
  });
});

describe("DeepAgents on the checkpointer + store pair", () => {
  const PLAN = "# Trip plan\n- fly to Lisbon on May 3\n- book the hotel near the river\n";

  function agent(model, client) {
    return createDeepAgent({
      model,
      systemPrompt: "You keep notes in files.",
      backend: new StoreBackend({ namespace: () => ["filesystem"] }),
      store: client.langgraphStore,
      checkpointer: client.langgraphCheckpointer,
    });
  }

  it("writes a file in one turn and reads it back in a resumed thread", async () => {
    const thread = { configurable: { thread_id: unique("deep") } };
    const writer = new ScriptedChatModel([
      new AIMessage({ content: "", tool_calls: [{ name: "write_file", args: { file_path: "/notes/plan.md", content: PLAN }, id: "call_write", type: "tool_call" }] }),
      new AIMessage("I saved the plan to /notes/plan.md."),
    ]);
    const first = await agent(writer, memory).invoke({ messages: [new HumanMessage("Plan my trip and save it.")] }, thread);
    assert.equal(first.messages.at(-1).content, "I saved the plan to /notes/plan.md.");

    const reader = new ScriptedChatModel([
      new AIMessage({ content: "", tool_calls: [{ name: "read_file", args: { file_path: "/notes/plan.md" }, id: "call_read", type: "tool_call" }] }),
      new AIMessage("The plan: fly to Lisbon on May 3."),
    ]);
    const second = await agent(reader, clientFor(import.meta.url)).invoke({ messages: [new HumanMessage("What does my plan say?")] }, thread);
    const seen = reader.seen[0].filter((m) => m.getType() !== "system").map((m) => [m.getType(), m.content]);
    assert.deepEqual(seen[0], ["human", "Plan my trip and save it."]);
    assert.deepEqual(seen.at(-1), ["human", "What does my plan say?"]);
    const toolResults = second.messages.filter((m) => m.getType() === "tool").map((m) => JSON.stringify(m.content));
    assert.ok(toolResults.some((text) => text.includes("fly to Lisbon on May 3")), toolResults.join("\n"));

    // The file is a document of the `langgraph` memory store.
    const store = (await memory.listStores()).data.find((s) => s.name === "langgraph");
    const docs = [];
    for await (const m of memory.iterStoreMemories({ storeId: store.id, pathPrefix: "/filesystem/" })) docs.push(m);
    const doc = docs.find((m) => m.path.includes("plan.md"));
    const full = await memory.getStoreMemory({ storeId: store.id, memoryId: doc.id, view: "full" });
    assert.ok(full.content.includes("fly to Lisbon on May 3"));
  });
});
