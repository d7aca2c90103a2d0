"""The turn lifecycle: lease the session, run the app's fresh agent tree, stream, commit, publish.

`ChatService.prepare` does everything that can fail with a status code (validation, the busy
policy) before the first byte is sent; `PreparedTurn.stream` then yields UI message stream parts
and ends with `finish` only after the turn is committed. A turn that fails commits nothing: the
session is exactly as it was, and the client is told so in an `error` part.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from google.adk import Runner
from google.adk.agents.invocation_context import LlmCallsLimitExceededError
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.artifacts import BaseArtifactService
from google.adk.events import Event
from google.genai import types
from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode
from pydantic import ValidationError

import agents
from agents.configured import turn_limits
from agents.deps import AgentDeps, TurnContext
from agents.registry import AppSpec, TurnPrelude
from agents.safety import LOCALE_STATE_KEY, crisis_part
from confidant.agentconfig.service import AGENT_CONFIG
from confidant.chat.busy import (
    INTERRUPTED,
    QUEUED,
    BusyGate,
    PartialReply,
    interrupted_part,
    keep_partial,
    strategy_for,
)
from confidant.chat.commit import commit_within
from confidant.chat.context import (
    MEMORIES,
    ContextRequest,
    ContextSource,
    RecentMemoriesSource,
    load_context,
)
from confidant.chat.human_loop import pause_parts, resume_message, stored_pause_parts
from confidant.chat.idempotency import CommittedReply, ReplayedTurn, mark_message, replay_of
from confidant.chat.memory import TurnMemoryService
from confidant.chat.requests import ChatRequest
from confidant.errors import (
    BadRequestError,
    CommitOutcomeUnknownError,
    ConfidantError,
    QuotaExceededError,
    SessionBusyError,
    StaleTurnError,
    StoreUnavailableError,
    TooManyRequestsError,
    TransientModelError,
    TurnLimitError,
)
from confidant.jobs.effects import job_id
from confidant.models.retry import RetryNotice, retry_listener
from confidant.observability import TURN_SPAN, tracer
from confidant.observability.stream_errors import log_stream_error
from confidant.ports import JobBus, JobRecord
from confidant.profiles.draft import ProfileDraft
from confidant.profiles.source import PROFILE
from confidant.quota.gate import Admission, QuotaGate
from confidant.quota.meter import TurnMeter, limit_data
from confidant.sessions.records import SessionKey
from confidant.sessions.service import ConfidantSessionService, OpenTurn
from confidant.sessions.store import SessionStore
from confidant.sessions.turn_queue import TurnQueue
from confidant.streaming.stream_log import StreamLogWriter
from confidant.streaming.ui_stream import EventTranslator, UIPart, data_part, error_part

logger = logging.getLogger(__name__)

_END = object()
PROTOCOL_PROGRESS = "protocol-progress"
_T = TypeVar("_T")
# Turns whose client may have gone: kept referenced so they run to their commit.
_turns_in_flight: set[asyncio.Task[None]] = set()


@dataclass(frozen=True)
class TurnPolicy:
    busy_policy: str = "reject"  # or "wait", "interrupt", "enqueue" (confidant/chat/busy.py)
    busy_wait_s: float = 30.0
    busy_poll_s: float = 0.25
    lease_ttl_s: float = 30.0
    store_timeout_s: float = 10.0  # taking the lease; the store's clients retry far longer
    # Caps per turn, platform-wide; an app's agent config may lower them (issue 14).
    max_llm_calls: int = 50
    max_tool_calls: int = 50
    commit_timeout_s: float = 15.0  # then the outcome is unknown (chat/commit.py)


@dataclass
class TurnResult:
    """What a finished turn produced (the JSON response is built from it)."""

    session_id: str
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    progress: list[dict[str, Any]] = field(default_factory=list)
    # The app's data parts by name (before_run's data, TurnContext.data_parts): top-level JSON.
    data: dict[str, Any] = field(default_factory=dict)
    retries: list[dict[str, Any]] = field(default_factory=list)
    # Data parts of the calls the run waits on (human review), e.g. data-human-input-needed.
    pauses: list[dict[str, Any]] = field(default_factory=list)
    crisis: dict[str, Any] | None = None  # the helplines shown when the crisis guard answered
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
        artifacts: BaseArtifactService | None = None,
        memory: TurnMemoryService | None = None,
        quota: QuotaGate | None = None,
        streams: StreamLogWriter | None = None,
        turn_queue: TurnQueue | None = None,
    ) -> None:
        self.quota = quota  # daily quotas by tier (confidant/quota); None: unmetered
        self.sessions = sessions
        self.streams = streams  # records each turn's parts for resumes (None: not recorded)
        self.artifacts = artifacts
        self.store = store
        self.deps = deps
        self.jobs = jobs
        self.policy = policy
        self.context_sources: Mapping[str, ContextSource] = context_sources or {
            MEMORIES: RecentMemoriesSource(store)
        }
        self.memory = memory or TurnMemoryService(store)
        # Double texting across instances; without a queue, interrupt/enqueue act as `wait`.
        self.busy = (
            None
            if turn_queue is None
            else BusyGate(
                sessions,
                turn_queue,
                lambda work: _within(work, policy.store_timeout_s),
                wait_s=policy.busy_wait_s,
                poll_s=policy.busy_poll_s,
                lease_ttl_s=policy.lease_ttl_s,
            )
        )

    async def prepare(self, user_id: str, request: ChatRequest) -> PreparedTurn | ReplayedTurn:
        """Lease the session and load the turn's context; raises before anything is streamed."""
        try:
            spec = agents.app_spec(request.app)
        except agents.UnknownAppError:
            raise BadRequestError(
                f"unknown app {request.app!r}; served apps: {', '.join(agents.app_names())}"
            ) from None
        options = _validated_options(spec, request.options)
        key = SessionKey(user_id, request.app, request.session_id or uuid.uuid4().hex)
        # The turn's span outlives this call: PreparedTurn.stream ends it after the commit.
        span = tracer.start_span(
            TURN_SPAN,
            attributes={
                "confidant.app": request.app,
                "confidant.session_id": key.session_id,
                "confidant.locale": request.locale,
            },
        )
        admission = None
        prepared: PreparedTurn | ReplayedTurn | None = None
        try:
            with trace.use_span(span, end_on_exit=False):
                if self.quota is not None:  # seed 001: the quota first, before any context
                    try:
                        admission = await _traced(
                            "confidant.quota",
                            _within(
                                self.quota.admit(user_id, request.message),
                                self.policy.store_timeout_s,
                            ),
                        )
                    except QuotaExceededError:
                        prepared = await self._replay_unleased(key, request, spec)
                        if prepared is None:
                            raise
                if prepared is None:
                    prepared = await self._prepare(key, request, spec, options)
                if isinstance(prepared, ReplayedTurn) and admission and self.quota is not None:
                    # A replay never counts: its turn did. (Admitted first, as the quota comes
                    # before the session read that finds a message already committed.)
                    counted, admission = admission, None
                    await self.quota.release(counted)
        except BaseException as error:
            if admission is not None and self.quota is not None:
                await self.quota.release(admission)
            _end_failed(span, error)
            raise
        prepared.trace_with(span)
        if isinstance(prepared, PreparedTurn):
            prepared.admission = admission
            # The turn runs from now on, whether or not its stream is ever read: a client gone
            # before the reply's first byte must not leave the lease held (until it expires)
            # and its counted message unanswered.
            prepared.start()
        return prepared

    async def _prepare(
        self,
        key: SessionKey,
        request: ChatRequest,
        spec: AppSpec,
        options: dict[str, Any],
    ) -> PreparedTurn | ReplayedTurn:
        user_id = key.user_id
        wanted = ContextRequest(
            user_id=user_id,
            app=request.app,
            session_id=key.session_id,
            message=request.message,
            locale=request.locale,
            options=options,
        )
        names = self._context_names(spec)
        strategy = strategy_for(request.multitask_strategy, spec, self.policy.busy_policy)
        lease = asyncio.ensure_future(_traced("confidant.lease", self._lease(key, strategy)))
        try:
            if strategy in QUEUED:  # the turns ahead may change the context: load it after them
                with contextlib.suppress(Exception):  # raised below; a cancel cancels the lease
                    await lease
            leased, loaded = await asyncio.gather(
                lease,
                _traced(
                    "confidant.context",
                    _within(
                        load_context(self.context_sources, names, wanted),
                        self.policy.store_timeout_s,
                    ),
                    {"confidant.context.sources": list(names)},
                ),
                return_exceptions=True,
            )
        except asyncio.CancelledError:
            # The client went away mid-load: a lease already taken is freed now, else the
            # session's next message would be refused until the lease expired.
            await self._release_taken(lease)
            raise
        if isinstance(leased, BaseException):
            raise leased
        if isinstance(loaded, BaseException):
            # Never leave a lease behind a failed start (if the store is down, it expires).
            with contextlib.suppress(StoreUnavailableError):
                await _within(self.sessions.release(leased), self.policy.store_timeout_s)
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
        try:  # whatever the app's hooks refuse, the lease is released before the 4xx
            record = leased.loaded.record
            replayed = replay_of(record.tail, request.message, request.message_id)
            if replayed is not None:
                # A resend of a message already committed: its reply again, no model call.
                await self.sessions.release(leased)
                return _replayed(key, request, replayed, stored_pause_parts(spec, record))
            message = resume_message(spec, context, leased.session)
            prelude = TurnPrelude()
            if spec.before_run is not None:
                prelude = await spec.before_run(self.deps, context)
                context = dataclasses.replace(context, loaded={**loaded, **prelude.loaded})
        except BaseException:
            await self.sessions.release(leased)
            raise
        return PreparedTurn(self, leased, request, context, spec, prelude, message)

    async def _release_taken(self, lease: asyncio.Future[OpenTurn]) -> None:
        """Release the lease `lease` took, if it took one (it is cancelled if still running)."""
        lease.cancel()
        await asyncio.wait({lease})  # never raises: its outcome is read below
        if lease.cancelled() or lease.exception() is not None:
            return
        with contextlib.suppress(StoreUnavailableError):  # then it expires
            await _within(self.sessions.release(lease.result()), self.policy.store_timeout_s)

    async def _replay_unleased(
        self, key: SessionKey, request: ChatRequest, spec: AppSpec
    ) -> ReplayedTurn | None:
        """Past the quota, a resend of a message committed before it ran out still gets its
        reply: one session read, no lease (a committed turn no longer changes), else None."""
        if request.message_id is None or request.session_id is None:
            return None
        try:
            loaded = await _within(self.store.load(key), self.policy.store_timeout_s)
        except StoreUnavailableError:
            return None  # the quota's 429 stands
        if loaded is None:
            return None
        record = loaded.record
        found = replay_of(record.tail, request.message, request.message_id)
        if found is None:
            return None
        return _replayed(key, request, found, stored_pause_parts(spec, record))

    def _context_names(self, spec: AppSpec) -> tuple[str, ...]:
        # Every app's turn also loads its agent config (the agent registry), when deployed.
        platform = (AGENT_CONFIG,) if AGENT_CONFIG in self.context_sources else ()
        return (*spec.context, *(name for name in platform if name not in spec.context))

    async def _lease(self, key: SessionKey, strategy: str) -> OpenTurn:
        if strategy in QUEUED and self.busy is not None:
            return await self.busy.lease(key, strategy)
        deadline = time.monotonic() + self.policy.busy_wait_s
        delay = 0.05
        while True:
            try:
                return await _within(
                    self.sessions.begin_turn(key, ttl_s=self.policy.lease_ttl_s),
                    self.policy.store_timeout_s,
                )
            except SessionBusyError:
                if strategy == "reject" or time.monotonic() + delay > deadline:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)


async def _within(awaitable: Awaitable[_T], seconds: float) -> _T:
    """`awaitable`'s result, or StoreUnavailableError after `seconds`: before a turn streams,
    a store that does not answer is a clear 503 (its client libraries retry for minutes).
    Nothing was stored; a lease written unseen expires after its TTL."""
    try:
        async with asyncio.timeout(seconds):
            return await awaitable
    except TimeoutError:
        raise StoreUnavailableError(
            "the session store is not answering; please send your message again shortly"
        ) from None


class PreparedTurn:
    """A leased session whose turn runs in a task of its own from `start()` (which
    `ChatService.prepare` calls) to its commit and the lease's release; `stream()` relays its
    parts."""

    _span: Span = trace.INVALID_SPAN  # the turn's span, ended when the turn is
    admission: Admission | None = None  # the quota's admission (its tokens are charged to it)

    def __init__(
        self,
        service: ChatService,
        turn: OpenTurn,
        request: ChatRequest,
        context: TurnContext,
        spec: AppSpec,
        prelude: TurnPrelude | None = None,
        message: types.Content | None = None,
    ) -> None:
        self._service = service
        # The run's new message: the user's text, or the answer that resumes a paused run.
        self._message = message or types.UserContent(request.message)
        self._turn = turn
        self._request = request
        self._context = context
        self._spec = spec
        self._prelude = prelude or TurnPrelude()
        self.result = TurnResult(session_id=turn.key.session_id)
        self._meter: TurnMeter | None = None
        self._abort = asyncio.Event()  # ADK's abort signal: set when a newer message interrupts
        self._queue: asyncio.Queue[Any] | None = None  # the turn's parts, from `start()` on

    @property
    def session_id(self) -> str:
        return self._turn.key.session_id

    def trace_with(self, span: Span) -> None:
        self._span = span

    def start(self) -> None:
        """Run the turn in a task of its own (once), so a client that goes away, before the
        first byte or mid-reply, loses nothing: the turn still finishes and commits."""
        if self._queue is not None:
            return
        self._queue = parts = asyncio.Queue()
        emit: Callable[[Any], None] = parts.put_nowait
        if self._service.streams is not None:  # every part is also logged, for resumes
            emit = self._service.streams.recorder(self._turn.key).tee(emit, _END)
        with trace.use_span(self._span, end_on_exit=False):  # the task inherits the span
            task = asyncio.create_task(self._complete(emit))
        _turns_in_flight.add(task)  # a strong reference until it is done
        task.add_done_callback(_turns_in_flight.discard)

    async def stream(self) -> AsyncIterator[UIPart]:
        """UI parts of the turn: start … finish, or start … error. Commits before `finish`."""
        self.start()
        assert self._queue is not None
        while (part := await self._queue.get()) is not _END:
            yield part

    async def _complete(self, emit: Callable[[Any], None]) -> None:
        try:
            await self._complete_turn(emit)
        finally:
            if self._meter is not None:  # a failed turn still costs the tokens it used
                await self._meter.charge()
            error = self.result.error
            if error is not None:
                self._span.set_status(Status(StatusCode.ERROR, error.code))
            self._span.end()

    async def _complete_turn(self, emit: Callable[[Any], None]) -> None:
        service, turn = self._service, self._turn
        try:
            emit({"type": "start", "messageId": f"msg-{uuid.uuid4().hex}"})
            emit(data_part("session", {"sessionId": self.session_id, "app": turn.key.app}))
            for name, payload in self._prelude.data.items():
                self.result.data[name] = payload
                emit(data_part(name, payload))
            translator = PartialReply()
            interrupted: str | None = None
            async with service.sessions.activate(turn, ttl_s=service.policy.lease_ttl_s):
                try:
                    with tracer.start_as_current_span("confidant.run"):
                        if service.busy is None:
                            await self._run(emit, translator)
                        elif await service.busy.run_interruptible(
                            turn, self._abort, self._run(emit, translator)
                        ):
                            interrupted = keep_partial(turn, translator, self._message)
                    for part in translator.finish():
                        emit(part)
                    pauses = pause_parts(self._spec, turn.session.events, turn.session.state)
                    jobs = self._jobs(translator.reply)
                    draft = self._profile_draft()
                    with tracer.start_as_current_span("confidant.commit"):
                        mark_message(turn, self._request.message_id)
                        await asyncio.gather(
                            commit_within(
                                turn,
                                service.store,
                                service.policy.commit_timeout_s,
                                jobs=jobs,
                                profile_ops=draft.ops if draft else [],
                                profile_version=draft.version if draft else None,
                            ),
                            self._charge(),  # tokens, beside the commit (never fails it)
                        )
                except ConfidantError as error:
                    if isinstance(error, TooManyRequestsError):  # the code, for useChat's onData
                        emit(data_part("error", limit_data(error), transient=True))
                    emit(from_error(self, translator, error))
                    return
                except Exception:
                    logger.exception("turn failed (session %s)", self.session_id)
                    failure = ConfidantError("the reply failed because of a server error")
                    emit(from_error(self, translator, failure))
                    return
            self.result.text = translator.reply
            self.result.pauses = pauses
            for part in pauses:  # announced once the paused run is safely stored
                emit(part)
            if interrupted is not None:
                part = interrupted_part(interrupted)
                self.result.data[INTERRUPTED] = part["data"]
                emit(part)
            emit({"type": "finish"})
        finally:
            emit(_END)
        # After the reply's last byte: a turn never waits on the bus. The jobs are already in
        # the outbox (committed above); this task is kept alive until it has published them.
        await self._publish(jobs)

    async def _run(self, emit: Callable[[Any], None], translator: EventTranslator) -> None:
        """Run the fresh agent tree, emitting UI parts for its events and for model retries."""
        service, turn = self._service, self._turn
        app = agents.build_app(turn.key.app, service.deps, self._context)
        runner = Runner(
            app=app,
            session_service=service.sessions,
            memory_service=service.memory,
            artifact_service=service.artifacts,
        )

        def on_retry(notice: RetryNotice) -> None:
            self.result.retries.append(notice.model_dump())
            emit(data_part("retry", notice.model_dump(), transient=True))

        # Sent while the tree was built (e.g. a resumed protocol's progress).
        for part in self._app_parts(self._context.data_parts.drain()):
            emit(part)
        limits, policy = turn_limits(self._context), service.policy
        run_config = RunConfig(
            streaming_mode=StreamingMode.SSE,
            max_llm_calls=_lowest(policy.max_llm_calls, limits.max_llm_calls),
        )
        meter = self._meter = TurnMeter(
            service.quota,
            self.admission,
            max_tool_calls=_lowest(policy.max_tool_calls, limits.max_tool_calls),
        )
        with retry_listener(on_retry):
            async for event in runner.run_async(
                user_id=turn.key.user_id,
                session_id=turn.key.session_id,
                new_message=self._message,
                state_delta={LOCALE_STATE_KEY: self._request.locale},
                run_config=run_config,
                abort_signal=self._abort,
            ):
                meter.observe(event)  # quota and caps: raises before the event's tools run
                for part in self._parts(event, translator):
                    emit(part)
                if event.error_code == LlmCallsLimitExceededError.__name__:
                    # ADK turns the exception into an error event (the platform's or app's cap).
                    raise TurnLimitError(
                        f"the reply needed more than {run_config.max_llm_calls} model calls, "
                        "the limit for one reply"
                    )
                if event.error_code == TransientModelError.__name__:
                    # ADK turns the retry wrapper's last error into an error event, by class name.
                    raise TransientModelError(event.error_message or "the model failed")
                if event.error_code and not self._abort.is_set():  # aborted: sealed by ADK
                    raise ConfidantError(
                        f"the model ended the reply: {event.error_code}"
                        + (f" ({event.error_message})" if event.error_message else "")
                    )

    async def _charge(self) -> None:
        if self._meter is not None:
            await self._meter.charge()

    def _parts(self, item: Event, translator: EventTranslator) -> list[UIPart]:
        # The app's parts announcing this event lead it (e.g. `data-agent` before its text).
        parts = [
            *self._app_parts(self._context.data_parts.leading(item)),
            *translator.translate(item),
        ]
        for part in parts:
            if part["type"] == "tool-input-available":
                self.result.tool_calls.append({"name": part["toolName"], "args": part["input"]})
        if not item.partial and item.actions and item.actions.state_delta:
            crisis = crisis_part(item.actions.state_delta)
            if crisis is not None:  # before the reply's text, so an app can show call buttons
                self.result.crisis = crisis
                parts.insert(0, data_part("crisis", crisis))
            reader = self._spec.progress
            progress = reader(item.actions.state_delta) if reader else None
            if progress is not None:
                self.result.progress.append(progress)
                parts.append(data_part(PROTOCOL_PROGRESS, progress))
        parts.extend(self._app_parts(self._context.data_parts.drain()))
        return parts

    def _jobs(self, reply: str) -> list[JobRecord]:
        """The post-turn jobs of the app's declared kinds, one per kind, keyed by
        (session, turn, kind): the turn is the revision this commit writes."""
        turn = self._turn
        record = turn.loaded.record
        revision = record.revision + 1
        payload = {
            "message": self._request.message,
            "reply": reply,
            "locale": self._request.locale,
            "first_seq": record.next_seq,
            "last_seq": record.next_seq + len(turn.events) - 1,
            "options": dict(self._context.options),
        }
        now = datetime.now(UTC)
        key = turn.key
        return [
            JobRecord(
                job_id=job_id(key.user_id, key.app, key.session_id, revision, kind),
                kind=kind,
                user_id=key.user_id,
                app=key.app,
                session_id=key.session_id,
                turn=revision,
                payload=payload,
                created_at=now,
            )
            for kind in self._spec.job_kinds
        ]

    def _app_parts(self, entries: list[tuple[str, Any]]) -> list[UIPart]:
        """The app's data parts (`TurnContext.data_parts`) as stream parts, each also kept for
        the JSON response: under `progress` for protocol progress, else a list under its name."""
        parts = []
        for name, data in entries:
            if name == PROTOCOL_PROGRESS:
                self.result.progress.append(data)
            else:
                self.result.data.setdefault(name, []).append(data)
            parts.append(data_part(name, data))
        return parts

    def _profile_draft(self) -> ProfileDraft | None:
        """The turn's profile, whose buffered writes commit with the turn, or never."""
        draft = self._context.loaded.get(PROFILE)
        return draft if isinstance(draft, ProfileDraft) else None

    async def _publish(self, jobs: list[JobRecord]) -> None:
        """Publish exactly the jobs the commit wrote to the outbox."""
        if not jobs:
            return
        try:
            with tracer.start_as_current_span("confidant.publish", attributes={"jobs": len(jobs)}):
                await self._service.jobs.publish(jobs)
        except Exception:
            # The jobs are in the outbox, committed with the turn; a sweeper can republish.
            logger.exception("publishing post-turn jobs failed (session %s)", self.session_id)


def _replayed(
    key: SessionKey, request: ChatRequest, found: CommittedReply, pauses: list[UIPart]
) -> ReplayedTurn:
    """The committed reply again, with what the session waits for now (its pause parts)."""
    assert request.message_id is not None  # a committed reply is found by its message id
    result = TurnResult(session_id=key.session_id, text=found.reply, pauses=pauses)
    return ReplayedTurn(result, request.app, request.message_id, found)


async def _traced(name: str, work: Awaitable[Any], attributes: dict[str, Any] | None = None) -> Any:
    with tracer.start_as_current_span(name, attributes=attributes):
        return await work


def _end_failed(span: Span, error: BaseException) -> None:
    code = error.code if isinstance(error, ConfidantError) else type(error).__name__
    span.set_status(Status(StatusCode.ERROR, code))
    span.end()


def _lowest(platform: int, app: int | None) -> int:
    """A cap of the platform, lowered (never raised) by the app's config."""
    return platform if app is None else min(platform, app)


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
    log_stream_error(logger, error.code, error.status)  # the request log says 200
    if isinstance(error, TransientModelError):
        text = f"The model is unavailable right now ({error.message})."
    elif isinstance(error, StaleTurnError):
        text = f"This reply could not be saved: {error.message}."
    else:
        text = error.message[:1].upper() + error.message[1:] + "."
    if isinstance(error, CommitOutcomeUnknownError):
        return error_part(text, error.code)  # its message says what to do
    return error_part(f"{text} Your message was not saved; please send it again.", error.code)
