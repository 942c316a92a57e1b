// The client against the live service: spec 000's conversation API with its
// Node names, paging by async iterators, memory items and stores, errors by
// class, and the retry policy (against a local server that answers 503 / 429).
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { once } from "node:events";
import { describe, it } from "node:test";

import {
  MemoryClient,
  MemoryConflictError,
  MemoryNotFoundError,
  MemoryQuotaExceededError,
  MemoryRateLimitError,
  MemoryAuthenticationError,
  MemoryValidationError,
  MemoryConnectionError,
  OPERATIONS,
} from "../dist/index.js";
import { baseUrl, clientFor, unique } from "./helpers.mjs";

const memory = clientFor(import.meta.url);

describe("conversations (spec 000)", () => {
  it("appends, reads, pages, updates, deletes and clears messages", async () => {
    const conversationId = unique("conv");
    const first = await memory.appendMessage({ conversationId, role: "user", content: "I moved to Lisbon", userId: "u_node", metadata: { source: "web" } });
    assert.match(first, /^msg_/);
    const ids = await memory.appendMessages({
      conversationId,
      messages: [
        { role: "assistant", content: "Noted." },
        { role: "user", content: [{ type: "text", text: "And I like tea" }] },
      ],
    });
    assert.equal(ids.length, 2);

    const messages = await memory.getMessages({ conversationId });
    assert.deepEqual(messages.map((m) => m.messageId), [first, ...ids]);
    assert.equal(messages[0].role, "user");
    assert.deepEqual(messages[0].metadata, { source: "web" });
    assert.equal(typeof messages[0].createdAt, "number");

    const paged = [];
    for await (const message of memory.iterMessages({ conversationId, pageSize: 1 })) paged.push(message.messageId);
    assert.deepEqual(paged, [first, ...ids]);

    const updated = await memory.updateMessage({ conversationId, messageId: first, content: "I moved to Porto", metadata: { edited: true } });
    assert.equal(updated.content, "I moved to Porto");
    assert.equal(typeof updated.updatedAt, "number");

    await memory.deleteMessage({ conversationId, messageId: ids[0] });
    assert.deepEqual((await memory.getMessages({ conversationId })).map((m) => m.messageId), [first, ids[1]]);

    const meta = await memory.getConversation({ conversationId });
    assert.equal(meta.conversationId, conversationId);
    assert.equal(meta.userId, "u_node");
    assert.equal(meta.messageCount, 2);

    const merged = await memory.updateConversation({ conversationId, metadata: { summary: "moved", summarizedUntil: first } });
    assert.equal(merged.metadata.summary, "moved");
    const dropped = await memory.updateConversation({ conversationId, metadata: { summary: null } });
    assert.deepEqual(dropped.metadata, { summarizedUntil: first });

    await memory.clearMessages({ conversationId });
    assert.deepEqual(await memory.getMessages({ conversationId }), []);
    await memory.deleteConversation({ conversationId });
    await assert.rejects(memory.getConversation({ conversationId }), MemoryNotFoundError);
    // spec 000: an unknown conversation has no messages
    assert.deepEqual(await memory.getMessages({ conversationId: unique("never") }), []);
  });

  it("lists conversations by user with cursors, and iterates them", async () => {
    const userId = unique("user");
    const made = [];
    for (let i = 0; i < 3; i++) {
      const conversationId = unique(`listed-${i}`);
      await memory.appendMessage({ conversationId, role: "user", content: `hello ${i}`, userId });
      made.push(conversationId);
    }
    const page = await memory.listConversations({ userId, limit: 2 });
    assert.equal(page.items.length, 2);
    assert.ok(page.nextCursor);
    const rest = await memory.listConversations({ userId, limit: 2, after: page.nextCursor });
    const all = [...page.items, ...rest.items].map((c) => c.conversationId);
    assert.deepEqual(new Set(all), new Set(made));
    // newest activity first
    assert.deepEqual(all, [...made].reverse());
    const iterated = [];
    for await (const c of memory.iterConversations({ userId, pageSize: 1 })) iterated.push(c.conversationId);
    assert.deepEqual(iterated, all);
  });

  it("converts stored messages to the Anthropic and OpenAI formats as the service does", async () => {
    const conversationId = unique("formats");
    await memory.appendMessages({
      conversationId,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: "", metadata: { tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: "{\"city\": \"Paris\"}" } }] } },
        { role: "tool", content: { temp: 21 }, metadata: { tool_call_id: "call_1" } },
        { role: "assistant", content: "21 degrees." },
      ],
    });
    const messages = await memory.getMessages({ conversationId });
    const anthropic = await memory.getFormattedMessages({ conversationId, format: "anthropic" });
    const openai = await memory.getFormattedMessages({ conversationId, format: "openai" });
    assert.deepEqual(memory.toAnthropicMessages(messages), anthropic.messages ?? anthropic);
    assert.deepEqual(memory.toOpenAIInput(messages), openai.messages ?? openai);
    assert.equal(memory.toAnthropic(messages).system, "Be brief.");
  });

  it("forks a branch and assembles context", async () => {
    const conversationId = unique("branch");
    const [a] = await memory.appendMessages({ conversationId, messages: [{ role: "user", content: "one" }, { role: "assistant", content: "two" }] });
    await memory.createBranch({ conversationId, name: "alt", fromMessageId: a });
    await memory.appendMessage({ conversationId, role: "user", content: "other way", branch: "alt" });
    const names = (await memory.listBranches({ conversationId })).map((b) => b.name);
    assert.ok(names.includes("main") && names.includes("alt"));
    assert.deepEqual((await memory.getMessages({ conversationId, branch: "alt" })).map((m) => m.content), ["one", "other way"]);
    const context = await memory.getContext({
      conversationId, maxMessages: 1, system: "Be brief.", temporaryMessages: [{ role: "user", content: "Where am I?" }],
    });
    assert.equal(context.conversation_id, conversationId);
    assert.equal(context.messages[0].role, "system");
    assert.equal(context.messages.at(-1).content, "Where am I?");
    await assert.rejects(memory.getContext({ conversationId, strategy: "psychic" }), MemoryValidationError);
  });
});

describe("memory items, edges, stores", () => {
  it("creates, pages, updates with preconditions, versions and deletes items", async () => {
    const tag = unique("fact");
    const made = [];
    for (let i = 0; i < 3; i++) {
      made.push(await memory.createMemory({ scope: "global", type: "fact", content: `${tag} number ${i}`, importance: 0.5 }));
    }
    const seen = [];
    for await (const item of memory.iterMemories({ q: tag, pageSize: 2 })) seen.push(item.id);
    assert.deepEqual(new Set(seen), new Set(made.map((m) => m.id)));

    const item = made[0];
    const changed = await memory.updateMemory({ memoryId: item.id, content: `${tag} changed`, expectedVersion: item.version });
    assert.equal(changed.version, item.version + 1);
    await assert.rejects(memory.updateMemory({ memoryId: item.id, content: "stale", expectedVersion: item.version }), MemoryConflictError);
    const versions = [];
    for await (const version of memory.iterMemoryVersions({ memoryId: item.id, pageSize: 1 })) versions.push(version);
    assert.equal(versions.length, 2);

    const edge = await memory.createEdge({ fromId: made[1].id, toId: made[0].id, relation: "supports" });
    assert.equal((await memory.getEdge({ edgeId: edge.id })).relation, "supports");
    const edges = [];
    for await (const e of memory.iterEdges({ fromId: made[1].id })) edges.push(e.id);
    assert.deepEqual(edges, [edge.id]);
    await memory.deleteEdge({ edgeId: edge.id });

    const ranked = await memory.searchMemories({ query: `${tag} number 2`, scope: "global", limit: 3 });
    assert.ok(ranked.data.length > 0);
    assert.ok(ranked.data.every((m) => typeof m.score === "number"));

    const batch = await memory.batchDeleteMemories({ ids: made.map((m) => m.id) });
    assert.equal(batch.results.length, 3);
    await assert.rejects(memory.getMemory({ memoryId: made[0].id }), MemoryNotFoundError);
  });

  it("keeps a memory's metadata as written and filters on it", async () => {
    const userId = unique("labels");
    const crm = await memory.createMemory({
      scope: "user", scopeId: userId, type: "fact", content: "Prefers email.", metadata: { sourceSystem: "crm", rank: 2 },
    });
    assert.deepEqual(crm.metadata, { sourceSystem: "crm", rank: 2 }); // the caller's keys, not renamed
    await memory.createMemory({ scope: "user", scopeId: userId, type: "fact", content: "Prefers calls.", metadata: { sourceSystem: "chat" } });
    const found = await memory.listMemories({ userId, metadata: { sourceSystem: "crm" } });
    assert.deepEqual(found.data.map((m) => m.id), [crm.id]);
    const changed = await memory.updateMemory({ memoryId: crm.id, metadata: { sourceSystem: "erp" } });
    assert.deepEqual(changed.metadata, { sourceSystem: "erp" });
  });

  it("deletes every memory of a user", async () => {
    const userId = unique("forget-me");
    await memory.appendMessage({ conversationId: unique("user-conv"), role: "user", content: "hello", userId });
    const made = await memory.createMemory({ scope: "user", scopeId: userId, type: "fact", content: "Likes chess." });
    const result = await memory.deleteUserMemories({ userId });
    assert.equal(result.user_id, userId);
    assert.ok(result.ids.includes(made.id));
    await assert.rejects(memory.getMemory({ memoryId: made.id }), MemoryNotFoundError);
  });

  it("writes store memories by path, pages them and refuses a stale precondition", async () => {
    const store = await memory.createStore({ name: unique("store"), description: "node test" });
    for (let i = 0; i < 3; i++) await memory.writeStoreMemory({ storeId: store.id, path: `/notes/${i}.md`, content: `note ${i}` });
    const paths = [];
    for await (const item of memory.iterStoreMemories({ storeId: store.id, pathPrefix: "/notes/", limit: 2 })) paths.push(item.path);
    assert.deepEqual(paths.sort(), ["/notes/0.md", "/notes/1.md", "/notes/2.md"]);
    await assert.rejects(
      memory.writeStoreMemory({ storeId: store.id, path: "/notes/0.md", content: "again", precondition: { type: "not_exists" } }),
      MemoryConflictError,
    );
    const tools = await memory.listStoreTools({ storeId: store.id });
    assert.ok(tools.data.length > 0);
    await memory.archiveStore({ storeId: store.id });
    assert.ok((await memory.getStore({ storeId: store.id })).archived_at);
  });

  it("throws the error class of each error type", async () => {
    await assert.rejects(memory.appendMessage({ conversationId: unique("bad"), role: "robot", content: "x" }), MemoryValidationError);
    await assert.rejects(memory.getMemory({ memoryId: "mem_missing" }), (error) => {
      assert.ok(error instanceof MemoryNotFoundError);
      assert.equal(error.statusCode, 404);
      assert.equal(error.errorType, "not_found_error");
      return true;
    });
    const stranger = new MemoryClient({ baseUrl, apiKey: "mk_wrong_key" });
    await assert.rejects(stranger.listStores(), MemoryAuthenticationError);
  });

  it("has every operation as a method", () => {
    for (const name of OPERATIONS) assert.equal(typeof memory[name], "function", name);
  });
});

describe("retry policy", () => {
  async function serve(answers) {
    const seen = [];
    const server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        seen.push({ at: Date.now(), method: request.method, headers: request.headers, body });
        const [status, headers, json] = answers[Math.min(seen.length - 1, answers.length - 1)];
        response.writeHead(status, { "content-type": "application/json", ...headers });
        response.end(JSON.stringify(json));
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const client = new MemoryClient({ baseUrl: `http://127.0.0.1:${server.address().port}`, apiKey: "k", maxRetries: 2 });
    return { client, seen, close: () => server.close() };
  }

  it("honours Retry-After and replays an append under the same idempotency key", async () => {
    const limited = { type: "error", error: { type: "rate_limit_error", message: "slow down" } };
    const { client, seen, close } = await serve([
      [429, { "retry-after": "1" }, limited],
      [503, {}, { type: "error", error: { type: "api_error", message: "busy" } }],
      [201, {}, { data: { message_id: "msg_1" } }],
    ]);
    try {
      assert.equal(await client.appendMessage({ conversationId: "c", role: "user", content: "hi" }), "msg_1");
      assert.equal(seen.length, 3);
      assert.ok(seen[1].at - seen[0].at >= 950, "waited for Retry-After");
      const keys = new Set(seen.map((s) => s.headers["idempotency-key"]));
      assert.equal(keys.size, 1);
      assert.match([...keys][0], /^mc-/);
    } finally {
      close();
    }
  });

  it("does not retry a write without a key, nor an exceeded quota", async () => {
    const quota = { type: "error", error: { type: "quota_exceeded_error", message: "full" } };
    const { client, seen, close } = await serve([[503, {}, {}], [429, {}, quota]]);
    try {
      await assert.rejects(client.restoreMemory({ memoryId: "m", versionId: "v" }), (e) => e.statusCode === 503);
      assert.equal(seen.length, 1);
      await assert.rejects(client.getMemory({ memoryId: "m" }), MemoryQuotaExceededError);
      assert.equal(seen.length, 2);
    } finally {
      close();
    }
  });

  it("gives up after maxRetries with the last error", async () => {
    const limited = { type: "error", error: { type: "rate_limit_error", message: "slow down" } };
    const { client, seen, close } = await serve([[429, { "retry-after": "0" }, limited]]);
    try {
      await assert.rejects(client.listStores(), MemoryRateLimitError);
      assert.equal(seen.length, 3);
    } finally {
      close();
    }
  });

  it("reports an unreachable service as a connection error", async () => {
    const client = new MemoryClient({ baseUrl: "http://127.0.0.1:9", apiKey: "k", maxRetries: 0 });
    await assert.rejects(client.listStores(), MemoryConnectionError);
  });
});
