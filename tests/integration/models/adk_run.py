"""Runs one turn through a real ADK Runner (in-memory sessions) with a given model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.events import Event
from google.adk.models import BaseLlm
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools import FunctionTool
from google.genai import types

INSTRUCTION = "You are a calm coach. Answer briefly."
QUOTES = {"courage": "Courage is fear that has said its prayers."}


@dataclass
class ToolLog:
    calls: list[dict[str, Any]] = field(default_factory=list)


TOOL_LOG = ToolLog()


def lookup_quote(topic: str) -> dict[str, str]:
    """Returns a short quote about a topic."""
    TOOL_LOG.calls.append({"topic": topic})
    return {"topic": topic, "quote": QUOTES.get(topic, "No quote.")}


@dataclass
class Turn:
    events: list[Event]

    @property
    def partial_texts(self) -> list[str]:
        return [
            "".join(part.text or "" for part in event.content.parts or [])
            for event in self.events
            if event.partial and event.content and not event.get_function_calls()
        ]

    @property
    def final_text(self) -> str:
        finals = [e for e in self.events if e.is_final_response() and e.content and not e.partial]
        assert finals, f"no final response in {self.events}"
        return "".join(part.text or "" for part in finals[-1].content.parts or [])


async def run_turn(model: BaseLlm, text: str, *, stream: bool = True) -> Turn:
    """One user message through LlmAgent + Runner; raises what the run raises."""
    agent = LlmAgent(
        name="coach",
        model=model,
        instruction=INSTRUCTION,
        tools=[FunctionTool(lookup_quote)],
    )
    sessions = InMemorySessionService()
    runner = Runner(app_name="confidant-test", agent=agent, session_service=sessions)
    session = await sessions.create_session(app_name="confidant-test", user_id="u1")
    mode = StreamingMode.SSE if stream else StreamingMode.NONE
    events = [
        event
        async for event in runner.run_async(
            user_id="u1",
            session_id=session.id,
            new_message=types.UserContent(text),
            run_config=RunConfig(streaming_mode=mode),
        )
    ]
    return Turn(events)
