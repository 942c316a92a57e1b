// The OpenAI Agents SDK's Session: the contract its own session backends are
// tested against (order, limits, pop, clear, atomic batches, isolation), and
// a Runner turn with a scripted model (no network) that keeps its history here.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Agent, Runner, Usage, setTracingDisabled } from "@openai/agents";

import { clientFor, unique } from "./helpers.mjs";

const memory = clientFor(import.meta.url);
setTracingDisabled(true);

const user = (text) => ({ type: "message", role: "user", content: text });

/** A model that answers from a script and remembers what it was sent. */
class ScriptedModel {
  constructor(replies) {
    this.replies = [...replies];
    this.requests = [];
  }

  async getResponse(request) {
    this.requests.push(request);
    const text = this.replies.shift();
    return {
      usage: new Usage(),
      output: [{ type: "message", role: "assistant", status: "completed", id: `msg_${this.requests.length}`,
        content: [{ type: "output_text", text, annotations: [] }] }],
    };
  }

  async *getStreamedResponse() {
    throw new Error("not scripted");
  }
}

describe("openaiSession(sessionId, { maxItems })", () => {
  it("keeps items in order, with limits, pop and clear", async () => {
    const session = memory.openaiSession(unique("sess"));
    assert.equal(await session.getSessionId(), session.sessionId);
    assert.deepEqual(await session.getItems(), []);
    assert.equal(await session.popItem(), undefined);
    await session.addItems([]);
    const items = ["a", "b", "c", "d"].map(user);
    await session.addItems(items.slice(0, 3));
    await session.addItems(items.slice(3));
    assert.deepEqual(await session.getItems(), items);
    assert.deepEqual(await session.getItems(2), items.slice(2));
    assert.deepEqual(await session.getItems(10), items);
    assert.deepEqual(await session.getItems(0), []);
    assert.deepEqual(await session.popItem(), items[3]);
    assert.deepEqual(await session.getItems(), items.slice(0, 3));
    await session.clearSession();
    assert.deepEqual(await session.getItems(), []);
  });

  it("takes maxItems as the default limit, and sessions are isolated", async () => {
    const id = unique("limited");
    const limited = memory.openaiSession(id, { maxItems: 2 });
    const items = ["один", "二", "três"].map(user);
    await limited.addItems(items);
    assert.deepEqual(await limited.getItems(), items.slice(1));
    assert.deepEqual(await limited.getItems(3), items);
    assert.deepEqual(await memory.openaiSession(unique("other")).getItems(), []);
    // The session is a conversation: operators and the API see its messages.
    assert.equal((await memory.getConversation({ conversationId: id })).messageCount, 3);
  });

  it("adds a batch all or none", async () => {
    const session = memory.openaiSession(unique("atomic"));
    await session.addItems([user("kept")]);
    await assert.rejects(session.addItems([user("fine"), { type: "message", role: "user", content: "\u0000".repeat(10), bogus: () => 1 }, 5]));
    assert.deepEqual(await session.getItems(), [user("kept")]);
  });

  it("holds a Runner's history across turns", async () => {
    const model = new ScriptedModel(["Hello Ana.", "Your name is Ana."]);
    const agent = new Agent({ name: "assistant", instructions: "Be brief.", model });
    const runner = new Runner();
    const sessionId = unique("runner");
    const first = await runner.run(agent, "My name is Ana.", { session: memory.openaiSession(sessionId) });
    assert.equal(first.finalOutput, "Hello Ana.");
    // A new session object (a new process, in effect) on the same id.
    const second = await runner.run(agent, "What is my name?", { session: memory.openaiSession(sessionId) });
    assert.equal(second.finalOutput, "Your name is Ana.");
    const sent = model.requests[1].input.map((item) => item.role);
    assert.deepEqual(sent, ["user", "assistant", "user"]);
    const stored = await memory.openaiSession(sessionId).getItems();
    assert.equal(stored.length, 4);
    assert.equal(stored[0].content, "My name is Ana.");
  });
});
