"""A local MCP server over stdio for clients that only launch local servers:
the same tools as the service's `/mcp` endpoint, run through its REST API.

    python -m memory_client.mcp --base-url http://127.0.0.1:8000 --api-key mk_...
    memory-mcp --base-url ... --api-key ...        (the console script)

`MEMORY_BASE_URL` and `MEMORY_API_KEY` stand in for the flags. The tool list is
the service's own (`GET /v1/agent_tools`), so both servers offer exactly the
same tools, descriptions and schemas, and a read-only key sees only the read
tools. Calls go to `POST /v1/agent_tools/{name}` with the local client's name,
which the service records with the key on every version it writes. Store files
are offered as resources too (`memory://stores/{store_id}/{path}`).

Needs the `mcp` package (`pip install memory-client[mcp]`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from urllib.parse import quote, unquote

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from memory_client.client import AsyncMemoryClient
from memory_client.errors import MemoryNotFoundError, MemoryServiceError

SERVER_NAME = "memory-service"
STORE_PREFIX = "memory://stores/"
# The MCP spec's code for a resource that does not exist.
RESOURCE_NOT_FOUND = -32002
INSTRUCTIONS = (
    "Long-term memory kept by a memory service. Use recall before answering when earlier conversations could "
    "matter, remember to keep a durable fact or preference (with a fact_key so later values replace it), forget "
    "to retire one, and list_memories to review. The memory_* tools read and write files in memory stores."
)


def _client_name(ctx: ServerRequestContext) -> str | None:
    params = ctx.session.client_params
    return params.client_info.name if params is not None and params.client_info.name else None


def _error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def _document_uri(store_id: str, path: str) -> str:
    return STORE_PREFIX + quote(store_id, safe="") + "/" + quote(path.lstrip("/"), safe="/")


def build_server(memory: AsyncMemoryClient) -> Server:
    """The stdio server's handlers, each one REST call (or a few) on `memory`."""

    async def list_tools(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        try:
            listing = await memory.list_agent_tools()
        except MemoryServiceError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=f"The memory service did not list its tools: {exc}")
        return types.ListToolsResult(tools=[
            types.Tool(
                name=tool["name"], title=tool["title"], description=tool["description"],
                input_schema=tool["input_schema"],
                annotations=types.ToolAnnotations(
                    title=tool["title"], read_only_hint=tool["read_only"],
                    destructive_hint=None if tool["read_only"] else tool["destructive"], open_world_hint=False,
                ),
            )
            for tool in listing["data"]
        ])

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = await memory.call_agent_tool(
                name=params.name, input=params.arguments or {}, client_name=_client_name(ctx)
            )
        except MemoryServiceError as exc:
            # A read-only key asking to write, an unknown tool, an unreachable
            # service: the model is told, as it would be by the HTTP server.
            return _error_result(str(exc))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result["content"])],
            structured_content=result.get("output") or None,
            is_error=bool(result.get("is_error")),
        )

    async def list_resources(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        entries: list[types.Resource] = []
        try:
            stores = await memory.list_stores(limit=100)
            for store in stores.data:
                async for item in memory.iter_store_memories(store_id=store["id"]):
                    if item.get("type") != "memory":
                        continue
                    entries.append(types.Resource(
                        uri=_document_uri(store["id"], item["path"]), name=item["path"],
                        title=f"{store['name']}: {item['path']}", mime_type="text/plain",
                        size=item.get("content_size_bytes"),
                    ))
        except MemoryServiceError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=str(exc))
        return types.ListResourcesResult(resources=entries)

    async def read_resource(ctx: ServerRequestContext, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        if not uri.startswith(STORE_PREFIX):
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource {uri!r}.", data={"uri": uri})
        raw_store, _, raw_path = uri[len(STORE_PREFIX):].partition("/")
        store_id, path = unquote(raw_store), "/" + unquote(raw_path)
        try:
            found = await _find_document(memory, store_id, path)
        except MemoryNotFoundError:
            found = None
        except MemoryServiceError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=str(exc), data={"uri": uri})
        if found is None:
            raise MCPError(code=RESOURCE_NOT_FOUND, message=f"No memory at {path} in store {store_id}.", data={"uri": uri})
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, text=found, mime_type="text/plain")])

    return Server(
        SERVER_NAME, title="Memory service", instructions=INSTRUCTIONS,
        on_list_tools=list_tools, on_call_tool=call_tool,
        on_list_resources=list_resources, on_read_resource=read_resource,
    )


async def _find_document(memory: AsyncMemoryClient, store_id: str, path: str) -> str | None:
    """The content of the file at `path`: listed under its directory, then read by id."""
    directory = path.rsplit("/", 1)[0] + "/"
    async for item in memory.iter_store_memories(store_id=store_id, path_prefix=directory, depth=1):
        if item.get("type") == "memory" and item.get("path") == path:
            full = await memory.get_store_memory(store_id=store_id, memory_id=item["id"], view="full")
            return full["content"]
    return None


async def serve(base_url: str | None, api_key: str | None) -> None:
    async with AsyncMemoryClient(base_url, api_key) as memory:
        server = build_server(memory)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memory-mcp", description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="the service's URL (default: $MEMORY_BASE_URL)")
    parser.add_argument("--api-key", help="an API key of the workspace (default: $MEMORY_API_KEY)")
    args = parser.parse_args(argv)
    try:
        anyio.run(serve, args.base_url, args.api_key)
    except ValueError as exc:
        print(f"memory-mcp: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
