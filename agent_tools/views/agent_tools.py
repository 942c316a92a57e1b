"""The MCP server's tools over plain HTTP, for agents (and the local stdio MCP
server of `memory_client`) that call the REST API:

- `GET /v1/agent_tools`: the tool definitions (name, description, JSON
  schema); a read-only key sees only the tools that do not write.
- `POST /v1/agent_tools/{name}` with `{"input": {...}, "client_name": "..."}`:
  runs the tool and answers a `tool_result` like the store tools do (errors the
  model can fix come back with `is_error: true`). A write tool with a read-only
  key is 403, an unknown tool 404. With `client_name`, the versions written
  record the key and that MCP client (`session_actor` `mcp:<client_name>`).
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.actors import MAX_CLIENT_NAME_CHARS, Actor
from agent_tools.mcp.catalogue import agent_tools_for
from agent_tools.mcp.tools import agent_tool_execute
from memories.llm.tokens import ENCODING_NAME
from memories.serializers.items import StrictInputSerializer
from memory_project.api import request_workspace
from memory_project.fields import StrictCharField


class AgentToolExecuteInputSerializer(StrictInputSerializer):
    input = serializers.JSONField(
        required=False, allow_null=True,
        help_text=f"The tool's arguments, as its `input_schema` in the catalogue says. A `max_tokens` (recall) "
                  f"bounds the whole answer the model reads, counted with the {ENCODING_NAME} tokenizer.")
    client_name = StrictCharField(required=False, allow_null=True, max_length=MAX_CLIENT_NAME_CHARS)


_TOOL_LIST = inline_serializer(
    "AgentToolList",
    {
        "data": inline_serializer(
            "AgentTool",
            {
                "name": serializers.CharField(),
                "title": serializers.CharField(),
                "description": serializers.CharField(),
                "input_schema": serializers.JSONField(),
                "read_only": serializers.BooleanField(),
                "destructive": serializers.BooleanField(),
            },
            many=True,
        )
    },
)
_TOOL_RESULT = inline_serializer(
    "AgentToolResult",
    {
        "type": serializers.CharField(),
        "tool_name": serializers.CharField(),
        "is_error": serializers.BooleanField(),
        "content": serializers.CharField(),
        "output": serializers.JSONField(),
        "error": serializers.JSONField(required=False),
    },
)


class AgentToolViewSet(viewsets.GenericViewSet):
    """The agent tools of the MCP server (memory stores and conversation memory)."""

    serializer_class = AgentToolExecuteInputSerializer
    # Read tools are allowed with a read-only key; write tools answer 403.
    read_only_safe_actions = ("execute",)

    @extend_schema(operation_id="agent_tools_list", responses={200: _TOOL_LIST})
    def catalogue(self, request: Request) -> Response:
        tools = agent_tools_for(read_only=request.auth.read_only)
        return Response({"data": [tool.to_wire() for tool in tools]})

    @extend_schema(
        operation_id="agent_tools_execute", request=AgentToolExecuteInputSerializer,
        responses={200: _TOOL_RESULT, 403: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT},
    )
    def execute(self, request: Request, tool_name: str) -> Response:
        serializer = AgentToolExecuteInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        client_name = serializer.validated_data.get("client_name")
        actor = (Actor.for_mcp_client(request.auth.pk, client_name) if client_name
                 else Actor.for_api_key(request.auth.pk))
        result = agent_tool_execute(
            workspace=request_workspace(request), api_key=request.auth, name=tool_name,
            arguments=serializer.validated_data.get("input"), actor=actor,
        )
        return Response(result.to_wire())
