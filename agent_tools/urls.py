"""Routes of the agent tools: the REST twin of the MCP server's tools and the
memory-store tools (the MCP server itself is at `/mcp`, in the root urls)."""

from django.urls import path, re_path

from agent_tools.views.agent_tools import AgentToolViewSet
from agent_tools.views.store_tools import MemoryToolViewSet

urlpatterns = [
    re_path(r"^agent_tools$", AgentToolViewSet.as_view({"get": "catalogue"}), name="agent-tool-list"),
    re_path(r"^agent_tools/(?P<tool_name>[^/]+)$", AgentToolViewSet.as_view({"post": "execute"}),
            name="agent-tool-execute"),
    path("memory_stores/<str:store_id>/tools", MemoryToolViewSet.as_view({"get": "list"}), name="memory-store-tools"),
    path(
        "memory_stores/<str:store_id>/tools/<str:tool_name>",
        MemoryToolViewSet.as_view({"post": "execute"}),
        name="memory-store-tool-execute",
    ),
]
