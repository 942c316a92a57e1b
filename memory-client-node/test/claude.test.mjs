// The Claude Agent SDK's SessionStore: the SDK's own session functions
// (listSessions, getSessionMessages, getSessionInfo, renameSession,
// deleteSession) run over this store and over the SDK's reference
// InMemorySessionStore give the same answers, as do the store's methods.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";

import {
  InMemorySessionStore,
  deleteSession,
  getSessionInfo,
  getSessionMessages,
  listSessions,
  renameSession,
} from "@anthropic-ai/claude-agent-sdk";

import { clientFor, unique } from "./helpers.mjs";

const memory = clientFor(import.meta.url);

function transcript(sessionId, cwd, turns) {
  const entries = [];
  let parent = null;
  turns.forEach(([role, text], i) => {
    const uuid = randomUUID();
    entries.push({
      type: role, uuid, parentUuid: parent, sessionId, cwd, isSidechain: false,
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      message: role === "user" ? { role, content: text } : { role, content: [{ type: "text", text }] },
    });
    parent = uuid;
  });
  return entries;
}

const withoutMtimes = (rows) => rows.map(({ lastModified, mtime, fileSize, ...rest }) => rest);

describe("claudeSessionStore()", () => {
  it("answers the SDK's session functions as the reference store does", async () => {
    const dir = `/tmp/${unique("project")}`;
    const ours = memory.claudeSessionStore();
    const reference = new InMemorySessionStore();
    const sessions = [randomUUID(), randomUUID()];
    const written = sessions.map((sessionId, n) => [
      transcript(sessionId, dir, [["user", `Plan trip ${n}`], ["assistant", "Sure."], ["user", "Add Lisbon"], ["assistant", "Added."]]),
      transcript(sessionId, dir, [["user", "sub task"]]),
    ]);
    const projectKey = dir.replace(/[^a-zA-Z0-9]/g, "-");
    for (const store of [ours, reference]) {
      for (const [n, sessionId] of sessions.entries()) {
        const [entries, sub] = written[n];
        // in two batches, as the SDK mirrors a transcript while it runs
        await store.append({ projectKey, sessionId }, entries.slice(0, 2));
        await store.append({ projectKey, sessionId }, entries.slice(2));
        await store.append({ projectKey, sessionId, subpath: "subagents/agent-1" }, sub);
      }
    }
    for (const sessionId of sessions) {
      const [a, b] = await Promise.all([ours, reference].map((sessionStore) => getSessionMessages(sessionId, { dir, sessionStore })));
      assert.deepEqual(a, b);
      assert.equal(a.length, 4);
    }
    const [listedOurs, listedReference] = await Promise.all([ours, reference].map((sessionStore) => listSessions({ dir, sessionStore })));
    assert.deepEqual(withoutMtimes(listedOurs).sort((x, y) => x.sessionId.localeCompare(y.sessionId)),
      withoutMtimes(listedReference).sort((x, y) => x.sessionId.localeCompare(y.sessionId)));
    assert.deepEqual(new Set(listedOurs.map((s) => s.summary ?? s.firstPrompt)), new Set(["Plan trip 0", "Plan trip 1"]));

    await Promise.all([ours, reference].map((sessionStore) => renameSession(sessions[0], "Lisbon trip", { dir, sessionStore })));
    const [infoOurs, infoReference] = await Promise.all([ours, reference].map((sessionStore) => getSessionInfo(sessions[0], { dir, sessionStore })));
    assert.equal(infoOurs.customTitle ?? infoOurs.summary, "Lisbon trip");
    assert.deepEqual(withoutMtimes([infoOurs]), withoutMtimes([infoReference]));

    await Promise.all([ours, reference].map((sessionStore) => deleteSession(sessions[1], { dir, sessionStore })));
    const [afterOurs, afterReference] = await Promise.all([ours, reference].map((sessionStore) => listSessions({ dir, sessionStore })));
    assert.deepEqual(afterOurs.map((s) => s.sessionId), [sessions[0]]);
    assert.deepEqual(afterReference.map((s) => s.sessionId), [sessions[0]]);
  });

  it("keeps the store contract: load, subkeys, summaries, delete, uuid replays", async () => {
    const store = memory.claudeSessionStore();
    const reference = new InMemorySessionStore();
    const projectKey = unique("proj");
    const sessionId = randomUUID();
    const main = { projectKey, sessionId };
    const entries = transcript(sessionId, "/w", [["user", "hello"], ["assistant", "hi"]]);
    const subEntry = { type: "user", uuid: randomUUID(), message: { role: "user", content: "x" } };
    for (const s of [store, reference]) {
      assert.equal(await s.load(main), null);
      await s.append(main, entries);
      await s.append(main, entries.slice(1)); // a replay: the uuid makes it a no-op
      await s.append(main, [{ type: "custom-title", customTitle: "Greeting", sessionId }]);
      await s.append({ ...main, subpath: "subagents/agent-a" }, [subEntry]);
    }
    // The reference store keeps a replayed entry twice; the contract asks for
    // uuids to be idempotency keys, and this store keeps it once.
    const title = { type: "custom-title", customTitle: "Greeting", sessionId };
    assert.deepEqual(await store.load(main), [...entries, title]);
    assert.deepEqual(await reference.load(main), [...entries, entries[1], title]);
    assert.deepEqual(await store.listSubkeys(main), await reference.listSubkeys(main));
    const [summary] = await store.listSessionSummaries(projectKey);
    const [expected] = await reference.listSessionSummaries(projectKey);
    assert.equal(summary.sessionId, sessionId);
    assert.deepEqual(summary.data, expected.data);
    const [listed] = await store.listSessions(projectKey);
    assert.equal(listed.sessionId, sessionId);
    assert.equal(listed.mtime, summary.mtime);

    await store.delete({ ...main, subpath: "subagents/agent-a" });
    assert.deepEqual(await store.listSubkeys(main), []);
    await store.delete(main);
    assert.equal(await store.load(main), null);
    assert.deepEqual(await store.listSessions(projectKey), []);
  });

  it("folds concurrent appends to one session without losing the summary", async () => {
    const store = memory.claudeSessionStore();
    const other = memory.claudeSessionStore(); // a second process, in effect
    const projectKey = unique("race");
    const sessionId = randomUUID();
    const entries = transcript(sessionId, "/w", [["user", "first prompt"], ["assistant", "a"], ["user", "b"], ["assistant", "c"]]);
    await Promise.all(entries.map((entry, i) => (i % 2 ? other : store).append({ projectKey, sessionId }, [entry])));
    assert.equal((await store.load({ projectKey, sessionId })).length, 4);
    const [summary] = await store.listSessionSummaries(projectKey);
    assert.equal(summary.data.firstPrompt, "first prompt");
  });
});
