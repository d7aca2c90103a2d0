"""Double texting: a message sent while its session is still answering another.

Four strategies, as LangGraph Platform names them (`multitask_strategy`), chosen per request
(body field `multitask_strategy`), else per app (`AppSpec.busy_policy`), else per deployment
(`CONFIDANT_BUSY_POLICY`):

- `reject`: 409 `session_busy` (ChatService._lease).
- `wait`: retry the lease with backoff until `busy_wait_s`; no order among waiters
  (ChatService._lease).
- `enqueue`: the request takes a ticket in the store's line for the session (arrival order,
  across instances: confidant/sessions/turn_queue.py) and takes the lease when its ticket is
  first and the running turn has committed. After `busy_wait_s` it leaves the line and answers
  409 `busy_timeout`.
- `interrupt`: as `enqueue`, and it asks the running turn (named by its lease holder) to stop as
  soon as it arrives (again whenever it is first in line and another turn holds the lease;
  messages queued before it keep their places). That turn's watcher, polling the store every
  `busy_poll_s` on whatever instance runs it, sets ADK's abort signal (ADK seals the run in
  history: `INVOCATION_ABORTED` events answer any dangling tool call), keeps what it streamed as
  a partial reply — an assistant event with `custom_metadata.interrupted = true` — commits, and
  releases the lease. Its stream ends with `data-interrupted` then `finish`, so a client can
  tell a cut reply from a whole one. The new message then runs.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from google.adk.events import Event
from google.genai import types

from agents.registry import AppSpec
from confidant.errors import SessionBusyError
from confidant.sessions.records import SessionKey
from confidant.sessions.service import ConfidantSessionService, OpenTurn
from confidant.sessions.turn_queue import TurnQueue
from confidant.streaming.ui_stream import EventTranslator, UIPart

logger = logging.getLogger(__name__)

QUEUED = frozenset({"enqueue", "interrupt"})  # strategies that wait in the store's line
# ADK's error code on the events that seal an aborted invocation (google.adk.events._abort_events).
ABORTED = "INVOCATION_ABORTED"
INTERRUPTED = "interrupted"  # the stream's data part and the partial reply's custom metadata key
# After the abort signal, how long ADK gets to stop at its next event before the run is cancelled
# (a model that sends nothing for a while would otherwise hold the session).
ABORT_GRACE_S = 1.0
Bounded = Callable[[Awaitable[Any]], Awaitable[Any]]


class QueueTimeoutError(SessionBusyError):
    """A queued message waited `busy_wait_s` without its turn coming; it left the line."""

    code = "busy_timeout"


def strategy_for(requested: str | None, spec: AppSpec, default: str) -> str:
    """The request's strategy, else the app's, else the deployment's."""
    return requested or spec.busy_policy or default


def interrupted_part(partial: str) -> UIPart:
    return {"type": f"data-{INTERRUPTED}", "data": {"reason": "a newer message", "kept": partial}}


class PartialReply(EventTranslator):
    """A translator that also remembers the text streamed since the reply's last stored event:
    what an interrupted turn keeps."""

    def __init__(self) -> None:
        super().__init__()
        self.author: str | None = None
        self._pending: list[str] = []
        self._seen: set[str] = set()

    def translate(self, event: Event) -> list[UIPart]:
        parts = super().translate(event)
        if event.author != "user" and not event.error_code:
            self.author = event.author
        if event.partial:
            self._pending += [p["delta"] for p in parts if p["type"] == "text-delta"]
        else:
            self._seen.add(event.id)
            if _text(event):  # the aggregated event, stored, holds what the deltas streamed
                self._pending.clear()
        return parts

    def unsaved(self, buffered: list[Event]) -> str:
        if any(e.id not in self._seen and e.author != "user" and _text(e) for e in buffered):
            return ""  # ADK stored the aggregated reply before this translator saw it
        return "".join(self._pending)


def _text(event: Event) -> str:
    parts = event.content.parts if event.content and event.content.parts else []
    return "".join(p.text for p in parts if p.text and not p.thought)


def keep_partial(turn: OpenTurn, reply: PartialReply, message: types.Content) -> str:
    """Complete an interrupted turn's buffer: the user's message (once), then what was streamed
    as an assistant event marked interrupted, before ADK's abort events. Returns the kept text."""
    events = turn.events
    invocation = next((e.invocation_id for e in events if e.invocation_id), "")
    invocation = invocation or f"e-{uuid.uuid4()}"
    if not any(e.author == "user" for e in events):  # stopped before ADK stored the message
        events.insert(0, Event(invocation_id=invocation, author="user", content=message))
    text = reply.unsaved(events)
    author = reply.author or next((e.author for e in events if e.author != "user"), "model")
    marker = Event(
        invocation_id=invocation,
        author=author,
        content=types.ModelContent(text) if text else None,
        custom_metadata={INTERRUPTED: True},
    )
    at = next((i for i, e in enumerate(events) if e.error_code == ABORTED), len(events))
    events.insert(at, marker)
    return text


@dataclass(frozen=True)
class BusyGate:
    """Leases for queued requests, and the watch that lets a running turn be interrupted."""

    sessions: ConfidantSessionService
    queue: TurnQueue
    bounded: Bounded  # a store call within the store timeout (a clear 503 otherwise)
    wait_s: float
    poll_s: float
    lease_ttl_s: float

    async def lease(self, key: SessionKey, strategy: str) -> OpenTurn:
        """Wait in line, then take the lease; `interrupt` asks the running turn to stop."""
        clock = self.sessions.clock
        ticket = uuid.uuid4().hex  # also the lease holder, so a later request can name this turn
        ttl = self.lease_ttl_s  # a ticket whose process died stops counting after this
        asked: str | None = None
        try:
            joined = self.bounded(self.queue.join(key, ticket, now=clock(), ttl_s=ttl))
            if strategy == "interrupt":  # stop the running reply at once, whatever waits before us
                _, asked = await asyncio.gather(joined, self._ask_to_stop(key, None))
            else:
                await joined
            deadline = time.monotonic() + self.wait_s
            refreshed = time.monotonic()
            delay = min(0.02, self.poll_s)
            while True:
                line = await self.bounded(self.queue.line(key, now=clock()))
                if ticket not in line:  # expired while this process stalled: back in line
                    await self.bounded(self.queue.join(key, ticket, now=clock(), ttl_s=ttl))
                elif line[0] == ticket:
                    try:
                        turn = await self.bounded(
                            self.sessions.begin_turn(key, ttl_s=self.lease_ttl_s, holder=ticket)
                        )
                    except SessionBusyError:
                        if strategy == "interrupt":
                            asked = await self._ask_to_stop(key, asked)
                    else:
                        if asked is not None:
                            try:
                                await self.bounded(self.queue.clear_interrupt(key))
                            except BaseException:  # never a lease behind a failed start
                                await self._release(turn)
                                raise
                        return turn
                if time.monotonic() >= deadline:
                    raise QueueTimeoutError(
                        f"this message waited {self.wait_s:g} s behind earlier messages on the "
                        "session and was not answered; please send it again"
                    )
                if time.monotonic() - refreshed > ttl / 3:
                    await self.bounded(self.queue.refresh(key, ticket, now=clock(), ttl_s=ttl))
                    refreshed = time.monotonic()
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.poll_s)
        finally:
            try:
                await self.bounded(self.queue.leave(key, ticket))
            except Exception:  # the ticket expires on its own
                logger.warning("leaving the line of %s failed", key, exc_info=True)

    async def _release(self, turn: OpenTurn) -> None:
        try:
            await self.bounded(self.sessions.release(turn))
        except Exception:  # the lease expires on its own
            logger.warning("releasing the lease of %s failed", turn.key, exc_info=True)

    async def _ask_to_stop(self, key: SessionKey, asked: str | None) -> str | None:
        loaded = await self.bounded(self.sessions.store.load(key))
        holder = loaded.record.lease_holder if loaded is not None else None
        if holder is None or holder == asked:
            return asked
        await self.bounded(self.queue.request_interrupt(key, holder))
        return holder

    async def run_interruptible(
        self, turn: OpenTurn, abort: asyncio.Event, run: Awaitable[None]
    ) -> bool:
        """Await `run` (the ADK run, passed `abort` as its abort signal); True when it was
        interrupted by a newer message, False when it ran to its end (its errors propagate)."""
        running = asyncio.ensure_future(run)
        watch = asyncio.create_task(self._wait_for_interrupt(turn))
        try:
            await asyncio.wait({running, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not running.done() and not watch.done():  # this task itself was cancelled
                running.cancel()
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)
        if running.done():
            running.result()
            return False
        abort.set()
        await asyncio.wait({running}, timeout=ABORT_GRACE_S)
        if not running.done():
            running.cancel()
        (outcome,) = await asyncio.gather(running, return_exceptions=True)
        if isinstance(outcome, Exception):
            logger.warning("the interrupted run of %s ended with %r", turn.key, outcome)
        return True

    async def _wait_for_interrupt(self, turn: OpenTurn) -> None:
        while True:
            try:
                if await self.queue.interrupt_requested(turn.key) == turn.holder:
                    return
            except Exception:  # a store hiccup must not stop the turn; look again
                logger.warning("reading the interrupt request of %s failed", turn.key)
            await asyncio.sleep(self.poll_s)
