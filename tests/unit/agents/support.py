"""Test doubles and a turn driver shared by the agent tests (test code only)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.events import Event
from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.models import BaseLlm, LlmCapabilities, LlmRequest, LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, InMemorySessionService, Session
from google.genai import types
from pydantic import Field

from agents import build_app
from agents.deps import AgentDeps, TurnContext
from agents.onemind import state_keys
from confidant.ports import WisdomPassage

APP = "onemind"


class CountingLlm(BaseLlm):
    """Delegates to `inner` and records every request, so tests can prove (non-)calls."""

    model: str = "counting"
    inner: BaseLlm
    requests: list[LlmRequest] = Field(default_factory=list)

    @property
    def capabilities(self) -> LlmCapabilities:
        return LlmCapabilities(output_schema_and_tools=True)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request.model_copy(deep=True))
        async for response in self.inner.generate_content_async(llm_request, stream=stream):
            yield response


ScriptStep = types.Part | str


class ScriptedLlm(BaseLlm):
    """Answers with the given steps in order (a function-call Part or a text), then "ok"."""

    model: str = "scripted"
    steps: list[Any] = Field(default_factory=list)
    requests: list[LlmRequest] = Field(default_factory=list)

    @property
    def capabilities(self) -> LlmCapabilities:
        return LlmCapabilities(output_schema_and_tools=True)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request.model_copy(deep=True))
        step = self.steps.pop(0) if self.steps else "ok"
        part = types.Part(text=step) if isinstance(step, str) else step
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def call(tool_name: str, /, **args: Any) -> types.Part:
    return types.Part.from_function_call(name=tool_name, args=args)


class RecordingMemoryService(BaseMemoryService):
    """Keeps explicit memories (ADK's InMemoryMemoryService does not implement add_memory)."""

    def __init__(self) -> None:
        self.added: list[tuple[str, str, MemoryEntry]] = []

    async def add_session_to_memory(self, session: Session) -> None:
        return None

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        return SearchMemoryResponse(
            memories=[e for a, u, e in self.added if (a, u) == (app_name, user_id)]
        )

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: dict[str, Any] | None = None,
    ) -> None:
        self.added.extend((app_name, user_id, entry) for entry in memories)


@dataclass
class RecordingWisdom:
    """A WisdomIndex that records its queries and returns one fixed passage."""

    queries: list[tuple[str, int, str | None]] = field(default_factory=list)
    topics: list[str | None] = field(default_factory=list)

    async def search(
        self, query: str, *, top_k: int = 3, locale: str | None = None, topic: str | None = None
    ) -> list[WisdomPassage]:
        self.queries.append((query, top_k, locale))
        self.topics.append(topic)
        return [WisdomPassage(id="w1", title="Fixed title", text="Fixed text.", locale="en")]


async def session_in_stage(
    stage: str, user_id: str = "u", session_id: str = "s"
) -> InMemorySessionService:
    """An in-memory session of the onemind app whose protocol is at `stage`."""
    sessions = InMemorySessionService()
    await sessions.create_session(
        app_name=APP,
        user_id=user_id,
        session_id=session_id,
        state={state_keys.CURRENT_STAGE: stage},
    )
    return sessions


@dataclass
class TurnResult:
    events: list[Event]

    @property
    def final(self) -> list[Event]:
        return [event for event in self.events if not event.partial]

    @property
    def partial_text(self) -> str:
        return "".join(
            part.text or ""
            for event in self.events
            if event.partial and event.content
            for part in event.content.parts or []
        )

    @property
    def reply_texts(self) -> list[str]:
        return [
            "".join(part.text or "" for part in event.content.parts or [])
            for event in self.final
            if event.content and event.is_final_response()
        ]

    @property
    def call_names(self) -> list[str]:
        return [c.name or "" for event in self.final for c in event.get_function_calls()]

    @property
    def responses(self) -> list[types.FunctionResponse]:
        return [r for event in self.final for r in event.get_function_responses()]


async def run_turn(
    *,
    deps: AgentDeps,
    sessions: BaseSessionService,
    memory: BaseMemoryService | None,
    turn: TurnContext,
    text: str,
    streaming: StreamingMode = StreamingMode.SSE,
    state_delta: dict[str, Any] | None = None,
    on_app: Callable[[Any], None] | None = None,
) -> TurnResult:
    """One request as the chat layer makes it: a fresh app and runner, then one run."""
    app = build_app(APP, deps, turn)
    if on_app is not None:
        on_app(app)
    runner = Runner(
        app=app, session_service=sessions, memory_service=memory, auto_create_session=True
    )
    events = [
        event
        async for event in runner.run_async(
            user_id=turn.user_id,
            session_id=turn.session_id,
            new_message=types.UserContent(text),
            state_delta=state_delta,
            run_config=RunConfig(streaming_mode=streaming),
        )
    ]
    return TurnResult(events)
