"""The agent tools, in one place: the MCP server at `/mcp` (`mcp/`: the
store tools and conversation memory - recall, remember, forget,
list_memories - and a workspace's resources), its REST twin
(`/v1/agent_tools`), and the memory-store tools of spec 004
(`store_tools/`, served at `/v1/memory_stores/{sid}/tools`). They use the
services and selectors of `memories` and `conversations`."""
