"""Recording each turn's UI message stream in a `StreamLog` while it is produced.

The turn relays its parts to the client as before; a recorder sees each one too, encodes it and
buffers it, and its own task writes batches: the first at once (so another instance finds the
stream as soon as the reply starts), then at most one write per `flush_s` with whatever arrived
meanwhile (a reply of hundreds of deltas costs a few dozen writes, not hundreds), and the rest
with the final head when the stream ends. The turn never waits on these writes and never fails
because of them: a failed write stops the recording (the head then says `truncated`), and a
resume falls back to the committed session.

Bounded: at most `max_parts` parts and `max_bytes` of encoded parts per turn (so a batch always
fits one Firestore document); past either, the recording stops (truncated). Every record of a
turn expires `retention_s` after the turn started (Firestore's TTL policy; the embedded store
deletes expired rows when a stream starts).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from confidant.ports import StreamHead, StreamLog
from confidant.streaming.ui_stream import UIPart, encode_part

logger = logging.getLogger(__name__)

# Recordings still writing after their turn's stream ended: kept referenced until done.
_recordings: set[asyncio.Task[None]] = set()


@dataclass(frozen=True)
class StreamLogPolicy:
    retention_s: float = 600.0  # a reply can be resumed this long after its turn started
    flush_s: float = 0.2  # at most one write per this interval while a turn streams
    max_parts: int = 4000
    max_bytes: int = 512_000  # under Firestore's 1 MiB document limit, whatever the batch
    poll_s: float = 0.25  # how often a resumed stream on another instance looks for new parts


class StreamRecorder:
    """One turn's recording: `record` each part, then `end` (both never block)."""

    def __init__(self, log: StreamLog, key: Any, policy: StreamLogPolicy, *, now: float) -> None:
        self._log = log
        self._key = key
        self._policy = policy
        self.head = StreamHead(
            turn_id=uuid.uuid4().hex, started_at=now, expire_at=now + policy.retention_s
        )
        self._pending: list[str] = []
        self._count = 0  # parts accepted (written or pending)
        self._written = 0
        self._bytes = 0
        self._truncated = False  # the bounds were reached
        self._failed = False  # a write failed
        self._last_type: str | None = None
        self._ended = False
        self._wake = asyncio.Event()
        self._end = asyncio.Event()
        task = asyncio.create_task(self._run())
        _recordings.add(task)
        task.add_done_callback(_recordings.discard)
        self.task = task

    def record(self, part: UIPart) -> None:
        if self._ended:
            return
        self._last_type = part.get("type")
        if self._truncated:
            return
        encoded = encode_part(part)
        size = len(encoded.encode())
        if self._count >= self._policy.max_parts or self._bytes + size > self._policy.max_bytes:
            self._truncated = True  # the stored parts stay a prefix of the stream
            return
        self._pending.append(encoded)
        self._count += 1
        self._bytes += size
        self._wake.set()

    def end(self) -> None:
        self._ended = True
        self._wake.set()
        self._end.set()

    def tee(self, emit: Callable[[Any], None], end_marker: object) -> Callable[[Any], None]:
        """`emit`, recording each part on the way (and ending at `end_marker`)."""

        def emit_and_record(part: Any) -> None:
            if part is end_marker:
                self.end()
            else:
                self.record(part)
            emit(part)

        return emit_and_record

    async def _run(self) -> None:
        write_head = True  # with the first batch
        while not self._ended:
            await self._wake.wait()
            self._wake.clear()
            if self._ended:
                break
            if self._pending and not self._failed:
                await self._write(self._pending, write_head=write_head)
                write_head = False
            # Parts accumulate into the next batch meanwhile; the stream's end cuts this short.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._end.wait(), self._policy.flush_s)
        batch = [] if self._failed else self._pending
        self.head = self.head.model_copy(
            update={
                "status": "finished" if self._last_type == "finish" else "failed",
                "part_count": self._written + len(batch),
                "truncated": self._truncated or self._failed,
            }
        )
        await self._write(batch, write_head=True)

    async def _write(self, batch: list[str], *, write_head: bool) -> None:
        self._pending = []
        try:
            await self._log.save(self._key, self.head, self._written, batch, write_head=write_head)
        except Exception:
            # A gap: no later batch is written; the final head says truncated, and resumes
            # fall back to the committed session.
            logger.warning("recording the stream of %s failed", self._key, exc_info=True)
            self._failed = True
        else:
            self._written += len(batch)


@dataclass
class StreamLogWriter:
    """Starts a recorder per turn (the composition root builds one per process)."""

    log: StreamLog
    policy: StreamLogPolicy
    clock: Callable[[], float] = time.time

    def recorder(self, key: Any) -> StreamRecorder:
        return StreamRecorder(self.log, key, self.policy, now=self.clock())
