"""ADK's session-service contract over a SessionStore, with turn-atomic commits.

Outside a turn, every `append_event` is its own revision-checked commit (ADK's usual contract).
Inside `ConfidantSessionService.turn(...)` the service holds the session's lease, hands the
Runner the session it loaded with the lease (no second read), buffers every event the Runner
appends, and writes them all — events, state deltas, memories, outbox jobs — in one commit.
If the turn never commits, storage is exactly as before it.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events import Event
from google.adk.sessions import BaseSessionService, Session
from google.adk.sessions._session_util import extract_state_delta
from google.adk.sessions.base_session_service import GetSessionConfig, ListSessionsResponse
from google.adk.sessions.state import State

from confidant.errors import StaleTurnError
from confidant.ports import JobRecord, MemoryRecord
from confidant.profiles.ops import ProfileOp
from confidant.profiles.store import ProfileVersion
from confidant.sessions.records import (
    SessionKey,
    SessionRecord,
    StoredEvent,
    TailPolicy,
    TurnWrite,
    window_of,
)
from confidant.sessions.store import LoadedSession, SessionExistsError, SessionStore

logger = logging.getLogger(__name__)

Clock = Callable[[], float]


def _merged_state(loaded: LoadedSession) -> dict[str, Any]:
    state = dict(loaded.record.state)
    state.update({State.APP_PREFIX + k: v for k, v in loaded.app_state.items()})
    state.update({State.USER_PREFIX + k: v for k, v in loaded.user_state.items()})
    return state


class EventCache:
    """Parsed events by (session, creation time, seq), so a warm instance skips re-validating
    the window every turn. Stored events never change, and ADK treats session events as
    read-only (it copies before editing request contents), so sharing them is safe."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._events: OrderedDict[tuple[Any, ...], Event] = OrderedDict()

    def events(self, record: SessionRecord, stored: list[StoredEvent]) -> list[Event]:
        if self.capacity <= 0:
            return [Event.model_validate_json(e["json"]) for e in stored]
        prefix = (record.key, record.created_at)
        result = []
        for entry in stored:
            key = (*prefix, entry["seq"])
            event = self._events.get(key)
            if event is None:
                event = Event.model_validate_json(entry["json"])
                self._events[key] = event
                if len(self._events) > self.capacity:
                    self._events.popitem(last=False)
            else:
                self._events.move_to_end(key)
            result.append(event)
        return result


_NO_CACHE = EventCache(0)


def _is_tool_only(event: Event) -> bool:
    parts = event.content.parts if event.content and event.content.parts else []
    return bool(parts) and all(p.function_call or p.function_response for p in parts)


def _call_ids(event: Event) -> set[str]:
    ids = {c.id for c in event.get_function_calls() if c.id}
    return ids | {r.id for r in event.get_function_responses() if r.id}


def without_old_tool_events(events: list[Event], keep_invocations: int | None) -> list[Event]:
    """Drop tool-only events of all but the last `keep_invocations` invocations.

    A pending long-running call, and any call or response paired with an event that stays,
    always stays, so the history the model sees is never left with half a pair.
    """
    if keep_invocations is None:
        return events
    recent: list[str] = []
    for event in reversed(events):
        if len(recent) >= keep_invocations:
            break
        if event.invocation_id not in recent:
            recent.append(event.invocation_id)
    droppable = [
        e.invocation_id not in recent and not e.long_running_tool_ids and _is_tool_only(e)
        for e in events
    ]
    pairs = list(zip(events, droppable, strict=True))
    kept_ids = set().union(*(_call_ids(e) for e, drop in pairs if not drop))
    return [e for e, drop in pairs if not drop or _call_ids(e) & kept_ids]


def _to_session(
    loaded: LoadedSession,
    policy: TailPolicy,
    config: GetSessionConfig | None = None,
    cache: EventCache = _NO_CACHE,
) -> Session:
    record = loaded.record
    events = cache.events(record, window_of(record.tail, policy.window))
    events = without_old_tool_events(events, policy.tool_invocations)
    if config is not None:
        if config.after_timestamp is not None:
            events = [e for e in events if e.timestamp >= config.after_timestamp]
        if config.num_recent_events is not None:
            events = events[-config.num_recent_events :] if config.num_recent_events else []
    session = Session(
        id=record.key.session_id,
        app_name=record.key.app,
        user_id=record.key.user_id,
        state=_merged_state(loaded),
        events=events,
        last_update_time=record.updated_at,
    )
    session._storage_update_marker = str(record.revision)
    return session


def _event_json(event: Event) -> str:
    return event.model_dump_json(exclude_none=True)


class OpenTurn:
    """One turn in progress: its lease, the session the Runner works on, and what it buffered."""

    def __init__(self, service: ConfidantSessionService, loaded: LoadedSession, holder: str):
        self._service = service
        self.loaded = loaded
        self.key = loaded.record.key
        self.holder = holder
        self.session = _to_session(loaded, service.store.policy, cache=service.event_cache)
        self.events: list[Event] = []
        self.session_state: dict[str, Any] = dict(loaded.record.state)
        self.app_delta: dict[str, Any] = {}
        self.user_delta: dict[str, Any] = {}
        self.memories: list[MemoryRecord] = []
        self.committed: SessionRecord | None = None
        self.lease_token = loaded.lease_token
        self.lease_lock = asyncio.Lock()  # a renewal and the commit never overlap

    def matches(self, app_name: str, user_id: str, session_id: str) -> bool:
        return (app_name, user_id, session_id) == (
            self.key.app,
            self.key.user_id,
            self.key.session_id,
        )

    def buffer(self, event: Event) -> None:
        delta = extract_state_delta(event.actions.state_delta if event.actions else {})
        self.session_state.update(delta["session"])
        self.app_delta.update(delta["app"])
        self.user_delta.update(delta["user"])
        self.events.append(event)

    async def commit(
        self,
        *,
        jobs: list[JobRecord] | None = None,
        profile_ops: list[ProfileOp] | None = None,
        profile_version: ProfileVersion | None = None,
    ) -> SessionRecord:
        """Write the whole turn atomically; raises StaleTurnError and writes nothing if it lost."""
        async with self.lease_lock:
            write = TurnWrite(
                expected_revision=self.loaded.record.revision,
                events=[_event_json(e) for e in self.events],
                state=self.session_state,
                app_delta=self.app_delta,
                user_delta=self.user_delta,
                memories=self.memories,
                jobs=list(jobs or []),
                profile_ops=list(profile_ops or []),
                profile_version=profile_version,
                lease_holder=self.holder,
                now=self._service.clock(),
                base=self.loaded.record,
                lease_token=self.lease_token,
            )
            self.committed = await self._service.store.commit(self.key, write)
        return self.committed


_open_turn: contextvars.ContextVar[OpenTurn | None] = contextvars.ContextVar(
    "confidant_open_turn", default=None
)


def current_turn() -> OpenTurn | None:
    return _open_turn.get()


class ConfidantSessionService(BaseSessionService):
    """Sessions on any SessionStore; `get_session` returns the bounded tail, never all history."""

    def __init__(
        self, store: SessionStore, *, clock: Clock = time.time, event_cache_size: int = 0
    ) -> None:
        self.store = store
        self.clock = clock
        self.event_cache = EventCache(event_cache_size)

    async def begin_turn(
        self, key: SessionKey, *, ttl_s: float, create: bool = True, holder: str | None = None
    ) -> OpenTurn:
        """Take the session's lease; the caller must then run the turn inside `activate`."""
        holder = holder or uuid.uuid4().hex
        loaded = await self.store.begin_turn(
            key, holder=holder, now=self.clock(), ttl_s=ttl_s, create=create
        )
        return OpenTurn(self, loaded, holder)

    @asynccontextmanager
    async def activate(
        self, turn: OpenTurn, *, ttl_s: float | None = None
    ) -> AsyncIterator[OpenTurn]:
        """Route this context's get/append calls to `turn`; release its lease unless committed.

        With `ttl_s`, a heartbeat renews the lease every third of it, so the lease can be short
        (a crashed process frees its sessions quickly) while a slow turn keeps its session.
        """
        token = _open_turn.set(turn)
        heartbeat = asyncio.create_task(self._heartbeat(turn, ttl_s)) if ttl_s else None
        try:
            yield turn
        finally:
            _open_turn.reset(token)
            if heartbeat is not None:
                heartbeat.cancel()
                await asyncio.gather(heartbeat, return_exceptions=True)
            if turn.committed is None:
                await self._release_within(turn, ttl_s / 3 if ttl_s else None)

    async def _release_within(self, turn: OpenTurn, seconds: float | None) -> None:
        """Release the lease, waiting at most `seconds`: when the store is down its client would
        retry for minutes after the user was told, and an unreleased lease expires anyway."""
        try:
            async with asyncio.timeout(seconds):
                await self.release(turn)
        except Exception:
            logger.warning(
                "releasing the lease of %s failed; it expires after its TTL",
                turn.key,
                exc_info=True,
            )

    async def _heartbeat(self, turn: OpenTurn, ttl_s: float) -> None:
        while True:
            await asyncio.sleep(ttl_s / 3)
            try:
                # Bounded: a renewal hung on a dead store must not hold the lock the commit needs.
                async with turn.lease_lock, asyncio.timeout(ttl_s / 3):
                    if turn.committed is not None:
                        return
                    token = await self.store.renew_turn(
                        turn.key,
                        holder=turn.holder,
                        now=self.clock(),
                        ttl_s=ttl_s,
                        token=turn.lease_token,
                    )
            except Exception:
                logger.warning("renewing the lease of %s failed", turn.key, exc_info=True)
                continue
            if token is None:
                return  # lost: the commit will be refused (StaleTurnError)
            turn.lease_token = token

    async def release(self, turn: OpenTurn) -> None:
        await self.store.end_turn(turn.key, holder=turn.holder)

    @asynccontextmanager
    async def turn(
        self, key: SessionKey, *, ttl_s: float, create: bool = True, holder: str | None = None
    ) -> AsyncIterator[OpenTurn]:
        """Hold the session's lease for one turn; released (uncommitted) if the block fails."""
        turn = await self.begin_turn(key, ttl_s=ttl_s, create=create, holder=holder)
        async with self.activate(turn, ttl_s=ttl_s):
            yield turn

    # -- BaseSessionService ---------------------------------------------------------------------

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        delta = extract_state_delta(state or {})
        key = SessionKey(user_id, app_name, (session_id or "").strip() or uuid.uuid4().hex)
        try:
            loaded = await self.store.create_session(
                key,
                state=delta["session"],
                app_delta=delta["app"],
                user_delta=delta["user"],
                now=self.clock(),
            )
        except SessionExistsError as exc:
            raise AlreadyExistsError(str(exc)) from exc
        return _to_session(loaded, self.store.policy)

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        turn = _open_turn.get()
        if turn is not None and turn.matches(app_name, user_id, session_id):
            return turn.session  # loaded with the lease; the Runner mutates this very object
        loaded = await self.store.load(SessionKey(user_id, app_name, session_id))
        return None if loaded is None else _to_session(loaded, self.store.policy, config)

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        records = await self.store.list_sessions(app=app_name, user_id=user_id)
        user_states: dict[str, dict[str, Any]] = {}  # one read per user, not per session
        sessions = []
        for record in records:
            uid = record.key.user_id
            if uid not in user_states:
                user_states[uid] = await self.store.user_state(app=app_name, user_id=uid)
            session = Session(
                id=record.key.session_id,
                app_name=app_name,
                user_id=uid,
                state=_merged_state(LoadedSession(record, {}, user_states[uid])),
                last_update_time=record.updated_at,
            )
            session._storage_update_marker = str(record.revision)
            sessions.append(session)
        return ListSessionsResponse(sessions=sessions)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        await self.store.delete_session(SessionKey(user_id, app_name, session_id))

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        return await self.store.user_state(app=app_name, user_id=user_id)

    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        turn = _open_turn.get()
        if turn is not None and turn.session is session:
            turn.buffer(event)
        else:
            await self._commit_one(session, event)
        return self._commit_event_to_session(session, event)

    async def _commit_one(self, session: Session, event: Event) -> None:
        delta = extract_state_delta(event.actions.state_delta if event.actions else {})
        session_state = {
            k: v
            for k, v in session.state.items()
            if not k.startswith((State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX))
        }
        session_state.update(delta["session"])
        marker = session._storage_update_marker
        write = TurnWrite(
            expected_revision=int(marker) if marker is not None else 0,
            events=[_event_json(event)],
            state=session_state,
            app_delta=delta["app"],
            user_delta=delta["user"],
            now=self.clock(),
        )
        try:
            record = await self.store.commit(
                SessionKey(session.user_id, session.app_name, session.id), write
            )
        except StaleTurnError as exc:
            raise StaleSessionError(str(exc)) from exc
        session._storage_update_marker = str(record.revision)
        session.last_update_time = record.updated_at
