"""One turn of a DeepAgents agent in a process of its own, on the service's
LangGraph adapters: `langgraph_checkpointer` for the thread, `langgraph_store`
for the agent's filesystem (deepagents' `StoreBackend`). The chat model is
scripted (no network): it calls one file tool, then answers.

    python -m tests.adapters.deep_agent_process --base-url URL --api-key KEY --thread T --phase write|read

Prints one JSON line: the final answer, the tool results, and the messages the
model was shown on its first call (so a resumed thread shows its past turns).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from deepagents import create_deep_agent
from deepagents.backends import StoreBackend
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from memory_client import MemoryClient

PLAN_PATH = "/notes/plan.md"
PLAN = "# Trip plan\n- fly to Lisbon on May 3\n- book the hotel near the river\n"


class ScriptedChatModel(BaseChatModel):
    """Answers with the next scripted message; records what it was shown."""

    replies: list[AIMessage]
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.replies.pop(0))])


SCRIPTS = {
    "write": [
        AIMessage(content="", tool_calls=[
            {"name": "write_file", "args": {"file_path": PLAN_PATH, "content": PLAN}, "id": "call_write", "type": "tool_call"}
        ]),
        AIMessage(content="I saved the plan to /notes/plan.md."),
    ],
    "read": [
        AIMessage(content="", tool_calls=[
            {"name": "read_file", "args": {"file_path": PLAN_PATH}, "id": "call_read", "type": "tool_call"}
        ]),
        AIMessage(content="The plan: fly to Lisbon on May 3."),
    ],
}


def run_turn(*, base_url: str, api_key: str, thread_id: str, phase: str) -> dict[str, Any]:
    model = ScriptedChatModel(replies=list(SCRIPTS[phase]))
    with MemoryClient(base_url, api_key) as memory:
        agent = create_deep_agent(
            model=model,
            system_prompt="You keep notes in files.",
            backend=StoreBackend(namespace=lambda _runtime: ("filesystem",)),
            store=memory.langgraph_store,
            checkpointer=memory.langgraph_checkpointer,
        )
        prompt = {"write": "Plan my trip and save it.", "read": "What does my plan say?"}[phase]
        state = agent.invoke({"messages": [{"role": "user", "content": prompt}]},
                             config={"configurable": {"thread_id": thread_id}})
    return {
        "final": state["messages"][-1].content,
        "tool_results": [m.content for m in state["messages"] if isinstance(m, ToolMessage)],
        "first_call_seen": [[m.type, m.content if isinstance(m.content, str) else json.dumps(m.content)]
                            for m in model.seen[0] if m.type != "system"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--thread", required=True)
    parser.add_argument("--phase", choices=sorted(SCRIPTS), required=True)
    args = parser.parse_args()
    print(json.dumps(run_turn(base_url=args.base_url, api_key=args.api_key, thread_id=args.thread, phase=args.phase)))


if __name__ == "__main__":
    main()
