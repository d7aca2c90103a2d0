"""The turn lifecycle: lease the session, run the app's fresh agent tree, stream, commit, publish.

`ChatService.prepare` does everything that can fail with a status code (validation, the busy
policy) before the first byte is sent; `PreparedTurn.stream` then yields UI message stream parts
and ends with `finish` only after the turn is committed. A turn that fails commits nothing: the
session is exactly as it was, and the client is told so in an `error` part.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.adk import Runner
from google.adk.agents.invocation_context import LlmCallsLimitExceededError
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.events import Event
from google.genai import types
from pydantic import ValidationError

import agents
from agents.configured import turn_limits
from agents.deps import AgentDeps, TurnContext
from agents.registry import AppSpec, TurnPrelude
from agents.safety import LOCALE_STATE_KEY
from confidant.agentconfig.service import AGENT_CONFIG
from confidant.chat.context import (
    MEMORIES,
    ContextRequest,
    ContextSource,
    RecentMemoriesSource,
    load_context,
)
from confidant.chat.memory import TurnMemoryService
from confidant.chat.requests import ChatRequest
from confidant.errors import (
    BadRequestError,
    ConfidantError,
    SessionBusyError,
    StaleTurnError,
    TransientModelError,
)
from confidant.models.retry import RetryNotice, retry_listener
from confidant.ports import JobBus, JobRecord
from confidant.sessions.records import SessionKey
from confidant.sessions.service import ConfidantSessionService, OpenTurn
from confidant.sessions.store import SessionStore
from confidant.streaming.ui_stream import EventTranslator, UIPart, data_part, error_part

logger = logging.getLogger(__name__)

_END = object()
# Turns whose client may have gone: kept referenced so they run to their commit.
_turns_in_flight: set[asyncio.Task[None]] = set()


@dataclass(frozen=True)
class TurnPolicy:
    busy_policy: str = "reject"  # or "wait"
    busy_wait_s: float = 30.0
    lease_ttl_s: float = 30.0


@dataclass
class TurnResult:
    """What a finished turn produced (the JSON response is built from it)."""

    session_id: str
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    progress: list[dict[str, Any]] = field(default_factory=list)
    retries: list[dict[str, Any]] = field(default_factory=list)
    # The app's data parts by name (AppSpec.before_run): returned as top-level JSON fields.
    data: dict[str, Any] = field(default_factory=dict)
    error: ConfidantError | None = None


class ChatService:
    def __init__(
        self,
        *,
        sessions: ConfidantSessionService,
        store: SessionStore,
        deps: AgentDeps,
        jobs: JobBus,
        policy: TurnPolicy,
        context_sources: Mapping[str, ContextSource] | None = None,
    ) -> None:
        self.sessions = sessions
        self.store = store
        self.deps = deps
        self.jobs = jobs
        self.policy = policy
        self.context_sources: Mapping[str, ContextSource] = context_sources or {
            MEMORIES: RecentMemoriesSource(store)
        }

    async def prepare(self, user_id: str, request: ChatRequest) -> PreparedTurn:
        """Lease the session and load the turn's context; raises before anything is streamed."""
        try:
            spec = agents.app_spec(request.app)
        except agents.UnknownAppError:
            raise BadRequestError(
                f"unknown app {request.app!r}; served apps: {', '.join(agents.app_names())}"
            ) from None
        options = _validated_options(spec, request.options)
        key = SessionKey(user_id, request.app, request.session_id or uuid.uuid4().hex)
        wanted = ContextRequest(
            user_id=user_id,
            app=request.app,
            session_id=key.session_id,
            message=request.message,
            locale=request.locale,
            options=options,
        )
        leased, loaded = await asyncio.gather(
            self._lease(key),
            load_context(self.context_sources, self._context_names(spec), wanted),
            return_exceptions=True,
        )
        if isinstance(leased, BaseException):
            raise leased
        if isinstance(loaded, BaseException):
            await self.sessions.release(leased)  # never leave a lease behind a failed start
            raise loaded
        context = TurnContext(
            user_id=user_id,
            session_id=key.session_id,
            locale=request.locale,
            memories=loaded.get(MEMORIES, ()),
            app=request.app,
            message=request.message,
            options=options,
            loaded=loaded,
        )
        prelude = TurnPrelude()
        if spec.before_run is not None:
            try:
                prelude = await spec.before_run(self.deps, context)
            except BaseException:
                await self.sessions.release(leased)
                raise
            context = dataclasses.replace(context, loaded={**loaded, **prelude.loaded})
        return PreparedTurn(self, leased, request, context, spec, prelude)

    def _context_names(self, spec: AppSpec) -> tuple[str, ...]:
        # Every app's turn also loads its agent config (the agent registry), when deployed.
        platform = (AGENT_CONFIG,) if AGENT_CONFIG in self.context_sources else ()
        return (*spec.context, *(name for name in platform if name not in spec.context))

    async def _lease(self, key: SessionKey) -> OpenTurn:
        deadline = time.monotonic() + self.policy.busy_wait_s
        delay = 0.05
        while True:
            try:
                return await self.sessions.begin_turn(key, ttl_s=self.policy.lease_ttl_s)
            except SessionBusyError:
                if self.policy.busy_policy != "wait" or time.monotonic() + delay > deadline:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)


class PreparedTurn:
    """A leased session, ready to run; `stream()` must be iterated (it releases the lease)."""

    def __init__(
        self,
        service: ChatService,
        turn: OpenTurn,
        request: ChatRequest,
        context: TurnContext,
        spec: AppSpec,
        prelude: TurnPrelude | None = None,
    ) -> None:
        self._service = service
        self._turn = turn
        self._request = request
        self._context = context
        self._spec = spec
        self._prelude = prelude or TurnPrelude()
        self.result = TurnResult(session_id=turn.key.session_id)

    @property
    def session_id(self) -> str:
        return self._turn.key.session_id

    async def stream(self) -> AsyncIterator[UIPart]:
        """UI parts of the turn: start … finish, or start … error. Commits before `finish`.

        The turn runs in a task of its own and this generator only relays its parts, so a
        client that goes away mid-reply loses nothing: the turn still finishes and commits.
        """
        parts: asyncio.Queue[Any] = asyncio.Queue()
        task = asyncio.create_task(self._complete(parts.put_nowait))
        _turns_in_flight.add(task)  # a strong reference until it is done
        task.add_done_callback(_turns_in_flight.discard)
        while (part := await parts.get()) is not _END:
            yield part

    async def _complete(self, emit: Callable[[Any], None]) -> None:
        service, turn = self._service, self._turn
        try:
            emit({"type": "start", "messageId": f"msg-{uuid.uuid4().hex}"})
            emit(data_part("session", {"sessionId": self.session_id, "app": turn.key.app}))
            for name, payload in self._prelude.data.items():
                self.result.data[name] = payload
                emit(data_part(name, payload))
            translator = EventTranslator()
            async with service.sessions.activate(turn, ttl_s=service.policy.lease_ttl_s):
                try:
                    await self._run(emit, translator)
                    for part in translator.finish():
                        emit(part)
                    jobs = self._jobs()
                    await turn.commit(jobs=jobs)
                except ConfidantError as error:
                    emit(from_error(self, translator, error))
                    return
                except Exception:
                    logger.exception("turn failed (session %s)", self.session_id)
                    failure = ConfidantError("the reply failed because of a server error")
                    emit(from_error(self, translator, failure))
                    return
            self.result.text = translator.reply
            await self._publish(jobs)
            emit({"type": "finish"})
        finally:
            emit(_END)

    async def _run(self, emit: Callable[[Any], None], translator: EventTranslator) -> None:
        """Run the fresh agent tree, emitting UI parts for its events and for model retries."""
        service, turn = self._service, self._turn
        app = agents.build_app(turn.key.app, service.deps, self._context)
        runner = Runner(
            app=app,
            session_service=service.sessions,
            memory_service=TurnMemoryService(service.store),
        )

        def on_retry(notice: RetryNotice) -> None:
            self.result.retries.append(notice.model_dump())
            emit(data_part("retry", notice.model_dump(), transient=True))

        limits = turn_limits(self._context)
        limit = {"max_llm_calls": limits.max_llm_calls} if limits.max_llm_calls else {}
        run_config = RunConfig(streaming_mode=StreamingMode.SSE, **limit)
        with retry_listener(on_retry):
            async for event in runner.run_async(
                user_id=turn.key.user_id,
                session_id=turn.key.session_id,
                new_message=types.UserContent(self._request.message),
                state_delta={LOCALE_STATE_KEY: self._request.locale},
                run_config=run_config,
            ):
                for part in self._parts(event, translator):
                    emit(part)
                if event.error_code == LlmCallsLimitExceededError.__name__:
                    # ADK turns the exception into an error event (the app's configured limit).
                    raise ConfidantError(
                        f"the reply needed more than {run_config.max_llm_calls} model calls, "
                        "the limit set for this app"
                    )
                if event.error_code:
                    raise ConfidantError(
                        f"the model ended the reply: {event.error_code}"
                        + (f" ({event.error_message})" if event.error_message else "")
                    )

    def _parts(self, item: Event, translator: EventTranslator) -> list[UIPart]:
        parts = [*self._event_data(item), *translator.translate(item)]
        for part in parts:
            if part["type"] == "tool-input-available":
                self.result.tool_calls.append({"name": part["toolName"], "args": part["input"]})
        if not item.partial and item.actions and item.actions.state_delta:
            reader = self._spec.progress
            progress = reader(item.actions.state_delta) if reader else None
            if progress is not None:
                self.result.progress.append(progress)
                parts.append(data_part("protocol-progress", progress))
        return parts

    def _event_data(self, item: Event) -> list[UIPart]:
        reader = self._prelude.event_data
        found = reader(item) if reader else None
        parts: list[UIPart] = []
        for name, payload in (found or {}).items():
            self.result.data.setdefault(name, []).append(payload)
            parts.append(data_part(name, payload))
        return parts

    def _jobs(self) -> list[JobRecord]:
        # Post-turn jobs (emotion, summary) are added by their issue; the outbox is ready.
        return []

    async def _publish(self, jobs: list[JobRecord]) -> None:
        """Publish exactly the jobs the commit wrote to the outbox."""
        if not jobs:
            return
        try:
            await self._service.jobs.publish(jobs)
        except Exception:
            # The jobs are in the outbox, committed with the turn; a sweeper can republish.
            logger.exception("publishing post-turn jobs failed (session %s)", self.session_id)


def _validated_options(spec: AppSpec, options: Mapping[str, Any]) -> dict[str, Any]:
    """The app's own body fields, validated by its options model (400 with the reason)."""
    if spec.options_model is None:
        return {}
    try:
        return spec.options_model.model_validate(dict(options)).model_dump(exclude_none=True)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}"
            for err in exc.errors()
        )
        raise BadRequestError(f"invalid {spec.name} fields: {problems}") from None


def from_error(
    prepared: PreparedTurn, translator: EventTranslator, error: ConfidantError
) -> UIPart:
    prepared.result.error = error
    if isinstance(error, TransientModelError):
        text = f"The model is unavailable right now ({error.message})."
    elif isinstance(error, StaleTurnError):
        text = f"This reply could not be saved: {error.message}."
    else:
        text = error.message[:1].upper() + error.message[1:] + "."
    return error_part(f"{text} Your message was not saved; please send it again.")
