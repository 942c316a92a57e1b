// A Node agent's MCP client (@modelcontextprotocol/sdk) on the service's /mcp:
// it lists the tools, remembers a preference and recalls it, and the memory
// is there for the REST API too.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { baseUrl, clientFor, keyFor, unique } from "./helpers.mjs";

describe("MCP over Streamable HTTP", () => {
  it("remembers and recalls through /mcp with the same API key", async () => {
    const transport = new StreamableHTTPClientTransport(new URL("/mcp", baseUrl), {
      requestInit: { headers: { Authorization: `Bearer ${keyFor(import.meta.url)}` } },
    });
    const mcp = new Client({ name: "node-agent", version: "1.0.0" });
    await mcp.connect(transport);
    try {
      const { tools } = await mcp.listTools();
      const names = tools.map((t) => t.name);
      for (const name of ["recall", "remember", "forget", "list_memories", "memory_write"]) assert.ok(names.includes(name), name);

      const userId = unique("mcp-user");
      const remembered = await mcp.callTool({
        name: "remember", arguments: { content: "Prefers aisle seats on long flights.", fact_key: "seat preference", user_id: userId },
      });
      assert.notEqual(remembered.isError, true, JSON.stringify(remembered));
      const recalled = await mcp.callTool({ name: "recall", arguments: { query: "which seat does the user like?", user_id: userId } });
      assert.match(JSON.stringify(recalled.content), /aisle seats/);

      const refused = await mcp.callTool({ name: "forget", arguments: { memory_id: "mem_nope" } });
      assert.equal(refused.isError, true);

      const items = await clientFor(import.meta.url).listMemories({ q: "aisle seats" });
      assert.equal(items.data.length, 1);
      assert.equal(items.data[0].fact_key, "seat preference");
    } finally {
      await mcp.close();
    }
  });
});
