"""A CrewAI crew in a process of its own (crewai's environment, `.venv-crewai`),
its memory kept by the service (`MemoryClient.crewai_memory`). The model is
scripted (no network): it answers the task, and gives the structured answers
crewai's memory asks a model for (the memories in a result, their scope and
importance, a long query's search phrases).

    python -m tests.adapters.crew_process --base-url URL --api-key KEY --phase learn|use

`learn` runs a task whose result holds a fact; crewai extracts it and saves it.
`use` runs a new crew (same name) on a task that shares no word with that
fact. Prints one JSON line: the answer, the prompts the model was shown for
the task, and what the crew's memory recalls for a query by meaning.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

# No telemetry leaves the machine (crewai sends it by default).
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from crewai import Agent, Crew, Task  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402
from crewai.memory.analyze import ConsolidationPlan, ExtractedMemories, MemoryAnalysis, QueryAnalysis  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

from memory_client import MemoryClient  # noqa: E402
from tests.adapters.crew_data import ANSWERS, CREW, FACT, QUERY, TASKS  # noqa: E402


class ScriptedLLM(BaseLLM):
    """The task's answer; the memory's structured answers by the model it
    asks for. Records the prompts of task calls."""

    answer: str
    task_prompts: list[str] = Field(default_factory=list)

    def supports_function_calling(self) -> bool:
        return True  # crewai then asks for a `response_model` instead of JSON text

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: type[BaseModel] | None = None) -> Any:
        if response_model is ExtractedMemories:
            return ExtractedMemories(memories=[FACT] if FACT in _text(messages) else [])
        if response_model is MemoryAnalysis:
            return MemoryAnalysis(suggested_scope="/customers", categories=["billing"], importance=0.8)
        if response_model is QueryAnalysis:
            return QueryAnalysis(recall_queries=[_text(messages)[-200:]], complexity="simple")
        if response_model is ConsolidationPlan:
            return ConsolidationPlan(actions=[], insert_new=True)
        if response_model is not None:
            raise AssertionError(f"no scripted answer for {response_model.__name__}")
        self.task_prompts.append(_text(messages))
        # A model that calls functions answers in plain text (crewai parses
        # no ReAct "Final Answer:" from it).
        return self.answer


def _text(messages: Any) -> str:
    if isinstance(messages, str):
        return messages
    return "\n".join(str(message.get("content", "")) for message in messages)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--phase", choices=sorted(TASKS), required=True)
    args = parser.parse_args()

    llm = ScriptedLLM(model="scripted", answer=ANSWERS[args.phase])
    with MemoryClient(args.base_url, args.api_key) as client:
        memory = client.crewai_memory(CREW, llm=llm)
        clerk = Agent(role="Billing clerk", goal="Keep billing right", backstory="Knows every customer", llm=llm)
        description, expected = TASKS[args.phase]
        crew = Crew(name=CREW, agents=[clerk], tasks=[Task(description=description, expected_output=expected,
                                                           agent=clerk)], memory=memory)
        result = crew.kickoff()
        memory.drain_writes()
        recalled = memory.recall(QUERY, limit=3, depth="shallow")
        print(json.dumps({
            "answer": result.raw,
            "task_prompts": llm.task_prompts,
            "recalled": [{"content": m.record.content, "scope": m.record.scope, "id": m.record.id,
                          "importance": m.record.importance} for m in recalled],
        }))


if __name__ == "__main__":
    main()
