"""The agent's memory tools (spec 004): definitions and the executor."""

from agent_tools.store_tools.definitions import FORMATS, TOOLS, tool_definitions, tool_spec
from agent_tools.store_tools.executor import ToolResult, memory_tool_execute

__all__ = ["FORMATS", "TOOLS", "ToolResult", "memory_tool_execute", "tool_definitions", "tool_spec"]
