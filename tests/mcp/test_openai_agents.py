"""An OpenAI Agents SDK agent loop (`Runner.run` with the SDK's scripted test
model) that uses the service through `MCPServerStreamableHttp`: it remembers a
fact in one run and recalls it in the next."""

from __future__ import annotations

import json

from agents import Agent, RunConfig, Runner
from agents.mcp import MCPServerStreamableHttp
from agents.testing import ScriptedModel, assistant_message, function_call

from memories.models import MemoryItem, MemoryVersion
from tests.mcp.conftest import run


def _tool_outputs(call_input) -> list[str]:
    return [item["output"] if isinstance(item["output"], str) else json.dumps(item["output"])
            for item in call_input if isinstance(item, dict) and item.get("type") == "function_call_output"]


def test_agent_remembers_then_recalls_through_mcp(live_server, tenant):
    model = ScriptedModel()
    model.enqueue([function_call("remember", {"content": "Prefers aisle seats", "fact_key": "seat preference",
                                              "user_id": "maya"}, call_id="call_remember")])
    model.enqueue([assistant_message("Noted: aisle seats.")])
    model.enqueue([function_call("recall", {"query": "seat preference", "user_id": "maya"}, call_id="call_recall")])
    model.enqueue([assistant_message("You prefer aisle seats.")])

    async def go():
        server = MCPServerStreamableHttp(
            params={"url": f"{live_server.url}/mcp", "headers": {"Authorization": f"Bearer {tenant.key}"}},
            name="memory", client_session_timeout_seconds=30,
        )
        async with server:
            agent = Agent(name="assistant", instructions="Use your memory tools.", model=model, mcp_servers=[server])
            config = RunConfig(tracing_disabled=True)
            first = await Runner.run(agent, "I prefer aisle seats, remember that.", run_config=config)
            first_tools = [tool.name for tool in model.last_call.tools]
            second = await Runner.run(agent, "Which seat do I like?", run_config=config)
            return first, first_tools, second

    first, tools, second = run(go)
    assert {"remember", "recall", "forget", "list_memories", "memory_read"} <= set(tools)
    assert first.final_output == "Noted: aisle seats."
    assert second.final_output == "You prefer aisle seats."
    # The model was handed the recalled fact as the recall tool's output.
    outputs = _tool_outputs(model.last_call.input)
    assert any("Prefers aisle seats" in output for output in outputs), outputs
    fact = MemoryItem.objects.get(workspace=tenant.workspace, fact_key="seat preference")
    assert (fact.scope, fact.scope_id, fact.content) == ("user", "maya", "Prefers aisle seats")
    assert MemoryVersion.objects.get(memory_id=fact.pk).actor_session_id.startswith("mcp")
