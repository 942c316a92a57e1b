"""The agent's memory tools (spec 004): definitions and the executor."""

from memories.tools.definitions import FORMATS, TOOLS, tool_definitions, tool_spec
from memories.tools.executor import ToolResult, memory_tool_execute

__all__ = ["FORMATS", "TOOLS", "ToolResult", "memory_tool_execute", "tool_definitions", "tool_spec"]
