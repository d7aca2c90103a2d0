"""Resuming a turn's UI message stream (`GET /v1/chat/{id}/stream`, the AI SDK's convention).

What a resume returns, in order of preference:

1. The session's latest recorded stream (`StreamLog`) while it has not expired: its parts from
   the beginning, or from the client's offset `start` (the number of parts it already has), then
   the new parts as the turn produces them, until it ends. The turn may run on another instance,
   so new parts are found by polling the log every `poll_s` (one indexed query per tick on
   Firestore; the async client has no listener, and a listener per resumed stream would hold a
   gRPC stream and a thread for what a poll does at the same cost on both stores).
2. When the turn has already committed and its stream is not in the log (expired early, never
   recorded, or recorded only in part), the finished reply rebuilt from the session's events,
   while the session's last write is within the retention (and only for a client that has
   nothing of it yet: a rebuilt reply's parts are not the original's).
3. Otherwise nothing (the endpoint answers 204).

A stream whose turn died (its process killed: the head stays `active` while nobody holds the
session's lease) ends with an `error` part instead of waiting forever. Every `error` part a
resume ends with is logged like a failed turn's (confidant/observability/stream_errors.py): a
turn that died is the server's failure, which the alert on failed replies counts; a recording
that cannot be followed to its end (the reply itself is saved) is only noted.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from google.adk.events import Event

from confidant.errors import NotFoundError
from confidant.observability.stream_errors import log_stream_error
from confidant.ports import StreamHead, StreamLog
from confidant.sessions.records import SessionKey, SessionRecord
from confidant.sessions.store import SessionStore
from confidant.streaming.stream_log import StreamLogPolicy
from confidant.streaming.ui_stream import EventTranslator, data_part, encode_part, error_part

# A stream whose head is still active is checked for a live lease after this long without
# new parts; two checks this far apart must both find the lease free before it counts as dead
# (between a turn's commit and its last log write the lease is already free, for a moment).
STALL_CHECK_S = 2.0

INTERRUPTED = (
    "The reply was interrupted before it finished (the server stopped). "
    "Your message was not saved; please send it again."
)
INTERRUPTED_SAVED = "The reply was interrupted here; the whole reply is saved in the conversation."
CUT_SHORT = (
    "The rest of this reply cannot be resumed here; the whole reply is saved in the conversation."
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StreamEnding:
    """How a resumed stream ends when its reply cannot: the `error` part's text and code, and
    the status the failure stands for (a 5xx is the server's: the alert counts it)."""

    text: str
    code: str
    status: int


# The turn's process died before its commit: the message is lost, as in a failed turn.
TURN_DIED = StreamEnding(INTERRUPTED, "reply_interrupted", 500)
# It died after its commit, before its last parts were logged: the whole reply is saved.
TURN_DIED_SAVED = StreamEnding(INTERRUPTED_SAVED, "reply_interrupted_saved", 500)
# The recording stops short (its bounds, a failed write) or a newer turn replaced it: the rest
# of this stream is gone (410), the reply itself is saved; no server failure, so INFO.
STREAM_CUT_SHORT = StreamEnding(CUT_SHORT, "stream_cut_short", 410)


class StreamResumer:
    def __init__(
        self,
        log: StreamLog | None,
        store: SessionStore,
        policy: StreamLogPolicy,
        clock: Callable[[], float] = time.time,
        stall_s: float = STALL_CHECK_S,
    ) -> None:
        self.stall_s = stall_s
        self._log = log
        self._store = store
        self._policy = policy
        self._clock = clock

    async def open(self, key: SessionKey, *, start: int = 0) -> AsyncIterator[str] | None:
        """The encoded parts to send, or None when there is nothing to resume.

        Raises NotFoundError when the caller has no session of that id (another user's
        session is never looked up: the key holds the verified user id).
        """
        loaded = await self._store.load(key)
        if loaded is None:
            raise NotFoundError(f"session {key.session_id!r} not found")
        record = loaded.record
        now = self._clock()
        head = await self._log.latest(key) if self._log is not None else None
        if head is not None and head.expire_at > now and head.started_at >= record.created_at:
            if head.status == "active" or not head.truncated:  # else: rebuilt, below
                return self._replay(key, head, start)
        committed_since = head is None or record.updated_at >= head.started_at
        recent = now - record.updated_at <= self._policy.retention_s
        if start == 0 and committed_since and recent and record.lease_free(now):
            rebuilt = rebuilt_reply(key, record)
            if rebuilt:
                return _iterate(rebuilt)
        return None

    async def _replay(self, key: SessionKey, head: StreamHead, start: int) -> AsyncIterator[str]:
        read = 0  # parts read from the log (always a batch boundary)
        stall = _StallWatch(self, key)
        while True:
            batch = await self._log.parts(key, head.turn_id, first=read)  # type: ignore[union-attr]
            for index, encoded in enumerate(batch, start=read):
                if index >= start:
                    yield encoded
            read += len(batch)
            if head.status != "active":
                if head.truncated or read < head.part_count:
                    yield _end_with(STREAM_CUT_SHORT)
                return
            if batch:
                stall.progress()
            elif ended := await stall.ended(head):
                yield _end_with(ended)
                return
            await asyncio.sleep(self._policy.poll_s)
            # The head first, then the parts: the last batch is written with the final head.
            latest = await self._log.latest(key)  # type: ignore[union-attr]
            if latest is None or latest.turn_id != head.turn_id:
                yield _end_with(STREAM_CUT_SHORT)  # deleted, or a newer turn replaced it
                return
            head = latest

    async def lease_state(self, key: SessionKey, since: float) -> tuple[bool, bool]:
        """(the session's lease is free, the session was written after `since`)."""
        loaded = await self._store.load(key)
        if loaded is None:
            return True, False
        record = loaded.record
        return record.lease_free(self._clock()), record.updated_at > since


class _StallWatch:
    """Tells a stream whose turn died from one that is only slow (a long tool call)."""

    def __init__(self, resumer: StreamResumer, key: SessionKey) -> None:
        self._resumer = resumer
        self._key = key
        self._last_progress = time.monotonic()
        self._free_checks = 0

    def progress(self) -> None:
        self._last_progress = time.monotonic()
        self._free_checks = 0

    async def ended(self, head: StreamHead) -> StreamEnding | None:
        """How the stream ends once its turn is known dead, else None (keep waiting)."""
        stall_s = self._resumer.stall_s
        if time.monotonic() - self._last_progress < stall_s * (self._free_checks + 1):
            return None
        free, committed = await self._resumer.lease_state(self._key, head.started_at)
        if not free:
            self.progress()  # the turn still holds its session: it is slow, not dead
            return None
        self._free_checks += 1
        if self._free_checks < 2:
            return None
        return TURN_DIED_SAVED if committed else TURN_DIED


def _end_with(ending: StreamEnding) -> str:
    """The encoded `error` part that ends a resumed stream, logged (the request log says 200)."""
    log_stream_error(logger, ending.code, ending.status)
    return encode_part(error_part(ending.text, ending.code))


async def _iterate(parts: list[str]) -> AsyncIterator[str]:
    for part in parts:
        yield part


def rebuilt_reply(key: SessionKey, record: SessionRecord) -> list[str]:
    """The session's last reply as a UI message stream, from the events after the last user
    message in the session's inline tail; empty when there is none."""
    events = [Event.model_validate_json(stored["json"]) for stored in record.tail]
    last_user = max((i for i, e in enumerate(events) if e.author == "user"), default=-1)
    translator = EventTranslator()
    body = [part for event in events[last_user + 1 :] for part in translator.translate(event)]
    body += translator.finish()
    if not body:
        return []
    parts = [
        {"type": "start", "messageId": f"msg-{uuid.uuid4().hex}"},
        data_part("session", {"sessionId": key.session_id, "app": key.app}),
        *body,
        {"type": "finish"},
    ]
    return [encode_part(part) for part in parts]
