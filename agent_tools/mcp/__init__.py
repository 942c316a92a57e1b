"""The MCP server: the agent tools (memory stores and conversation memory) and
the resources of a workspace, over Streamable HTTP at `/mcp`."""
