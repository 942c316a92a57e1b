"""The MCP server: the official SDK's low-level `Server`, with handlers that
list and run the agent tools and list and read the resources of the caller's
workspace.

Who calls is decided before the SDK sees the request (`agent_tools.mcp.views`:
the API key, and the client's name) and travels in the ASGI scope under
`CALLER_SCOPE_KEY`. Handlers are coroutines; the ORM work runs through
`sync_to_async`, which brings it back to the request's own thread and
database connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp_types as types
from asgiref.sync import sync_to_async
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

import agent_tools.mcp.resources as resources
from accounts.actors import Actor
from agent_tools.mcp.catalogue import agent_tools_for
from agent_tools.mcp.tools import agent_tool_execute
from agent_tools.store_tools import ToolResult
from memory_project.errors import DomainError, NotFoundError, PermissionDeniedError

SERVER_NAME = "memory-service"
SERVER_VERSION = "1.0.0"
CALLER_SCOPE_KEY = "memory_service.caller"
# The MCP spec's code for a resource that does not exist.
RESOURCE_NOT_FOUND = -32002
INSTRUCTIONS = (
    "Long-term memory for this workspace. Use recall before answering when earlier conversations could matter, "
    "remember to keep a durable fact or preference (with a fact_key so later values replace it), forget to "
    "retire one, and list_memories to review. The memory_* tools read and write files in the workspace's "
    "memory stores. Resources: store files (memory://stores/...) and conversation summaries "
    "(memory://conversations/.../summary)."
)


@dataclass(frozen=True)
class Caller:
    api_key: Any  # accounts.models.ApiKey, with its workspace loaded
    client_name: str | None = None

    @property
    def workspace(self):
        return self.api_key.workspace


def _caller(ctx: ServerRequestContext) -> Caller:
    request = ctx.request
    caller = request.scope.get(CALLER_SCOPE_KEY) if request is not None else None
    if not isinstance(caller, Caller):
        # Only reachable if the SDK app were served without the view in front of it.
        raise MCPError(code=types.INVALID_REQUEST, message="Not authenticated.")
    return caller


def _client_name(ctx: ServerRequestContext, caller: Caller) -> str | None:
    """The name the client declared: on this request's envelope (2026-era
    protocol), else from its `initialize` (carried by the view)."""
    params = ctx.session.client_params
    if params is not None and params.client_info.name:
        return params.client_info.name
    return caller.client_name


async def _list_tools(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    caller = _caller(ctx)
    tools = [
        types.Tool(
            name=tool.name,
            title=tool.title,
            description=tool.description,
            input_schema=tool.input_schema,
            annotations=types.ToolAnnotations(
                title=tool.title,
                read_only_hint=not tool.writes,
                destructive_hint=tool.destructive if tool.writes else None,
                open_world_hint=False,
            ),
        )
        for tool in agent_tools_for(read_only=caller.api_key.read_only)
    ]
    return types.ListToolsResult(tools=tools)


def _run_tool(caller: Caller, name: str, arguments: Any, client_name: str | None) -> ToolResult:
    try:
        return agent_tool_execute(
            workspace=caller.workspace, api_key=caller.api_key, name=name, arguments=arguments,
            actor=Actor.for_mcp_client(caller.api_key.pk, client_name),
        )
    except (NotFoundError, PermissionDeniedError) as exc:
        # Over MCP even these are the model's to act on: a tool error, not a protocol error.
        return ToolResult(name, exc.message, {}, {"type": exc.code, "message": exc.message})


async def _call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
    caller = _caller(ctx)
    result = await sync_to_async(_run_tool)(caller, params.name, params.arguments, _client_name(ctx, caller))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=result.content)],
        structured_content=result.output or None,
        is_error=result.error is not None,
    )


async def _list_resources(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    caller = _caller(ctx)
    cursor = params.cursor if params is not None else None
    try:
        entries, next_cursor = await sync_to_async(resources.resource_list)(workspace=caller.workspace, cursor=cursor)
    except DomainError as exc:
        raise MCPError(code=types.INVALID_PARAMS, message=exc.message)
    return types.ListResourcesResult(
        resources=[
            types.Resource(
                uri=entry.uri, name=entry.name, title=entry.title, description=entry.description,
                mime_type=entry.mime_type, size=entry.size,
            )
            for entry in entries
        ],
        next_cursor=next_cursor,
    )


async def _list_resource_templates(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    _caller(ctx)
    return types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(
                uri_template=resources.STORE_TEMPLATE, name="store-document", title="Memory store file",
                description="A file of a memory store, by the store's id and the file's path.",
            ),
            types.ResourceTemplate(
                uri_template=resources.SUMMARY_TEMPLATE, name="conversation-summary", title="Conversation summary",
                description="The rolling summary of a conversation, by its id.", mime_type="text/plain",
            ),
        ]
    )


async def _read_resource(ctx: ServerRequestContext, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    caller = _caller(ctx)
    uri = str(params.uri)
    try:
        content = await sync_to_async(resources.resource_read)(workspace=caller.workspace, uri=uri)
    except NotFoundError as exc:
        raise MCPError(code=RESOURCE_NOT_FOUND, message=exc.message, data={"uri": uri})
    except DomainError as exc:
        raise MCPError(code=types.INVALID_PARAMS, message=exc.message, data={"uri": uri})
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, text=content.text, mime_type=content.mime_type)]
    )


def build_server() -> Server:
    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        title="Memory service",
        instructions=INSTRUCTIONS,
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
        on_list_resources=_list_resources,
        on_list_resource_templates=_list_resource_templates,
        on_read_resource=_read_resource,
    )
