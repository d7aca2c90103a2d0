"""The embedded job bus: an asyncio queue drained by worker tasks in this process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

from confidant.ports import JobRecord

logger = logging.getLogger(__name__)

JobHandler = Callable[[JobRecord], Awaitable[None]]


class InProcessJobBus:
    """Runs post-turn jobs on the running event loop (local mode; no account needed).

    Workers start lazily on the loop of the first `publish`, so constructing the bus needs no
    loop. A job of an unregistered kind is logged and dropped; a failing handler is retried
    with the given delays and, when attempts run out, logged and kept in `failed` (the
    in-process counterpart of a dead-letter topic). The workers never die of a handler error.

    Args:
        max_attempts: Attempts per job, including the first.
        retry_delays: Seconds before each retry; the last value repeats.
        workers: Concurrent jobs (handlers mostly wait on a model or a store).
        handler_timeout_s: One attempt's time limit, so a hung handler cannot stall `drain`.
        max_failed: How many failed jobs `failed` keeps (oldest dropped).
    """

    def __init__(
        self,
        *,
        max_attempts: int = 3,
        retry_delays: Sequence[float] = (0.5, 2.0),
        workers: int = 4,
        handler_timeout_s: float | None = 300.0,
        max_failed: int = 100,
    ) -> None:
        if max_attempts < 1 or workers < 1:
            raise ValueError("max_attempts and workers must be at least 1")
        self._max_attempts = max_attempts
        self._retry_delays = tuple(retry_delays) or (0.0,)
        self._worker_count = workers
        self._handler_timeout_s = handler_timeout_s
        self._handlers: dict[str, JobHandler] = {}
        self._queue: asyncio.Queue[JobRecord] | None = None
        self._workers: list[asyncio.Task[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self.failed: deque[JobRecord] = deque(maxlen=max_failed)

    def register(self, kind: str, handler: JobHandler) -> None:
        """Route jobs of `kind` to `handler` (one handler per kind)."""
        if kind in self._handlers:
            raise ValueError(f"a handler for job kind {kind!r} is already registered")
        self._handlers[kind] = handler

    async def publish(self, jobs: Sequence[JobRecord]) -> None:
        if self._closed:
            raise RuntimeError("the job bus is closed")
        queue = self._ensure_workers()
        for job in jobs:
            queue.put_nowait(job)  # unbounded: publishing never waits on the workers

    async def drain(self) -> None:
        """Wait until every job published so far has finished (tests, graceful shutdown)."""
        if self._queue is not None and self._loop is asyncio.get_running_loop():
            await self._queue.join()

    async def close(self) -> None:
        """Finish queued jobs, then stop the workers."""
        self._closed = True
        try:
            await self.drain()
        finally:
            for task in self._workers:
                task.cancel()
            for task in self._workers:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            self._workers = []
            self._queue = None
            self._loop = None

    def _ensure_workers(self) -> asyncio.Queue[JobRecord]:
        loop = asyncio.get_running_loop()
        if self._queue is None or self._loop is not loop:
            # Queues and tasks belong to one loop; a new loop (e.g. a new test) gets new ones.
            if self._queue is not None and self._queue.qsize():
                logger.warning(
                    "event loop changed; %d queued jobs of the old loop are lost",
                    self._queue.qsize(),
                )
            self._loop = loop
            self._queue = asyncio.Queue()
            self._workers = [
                loop.create_task(self._work(self._queue), name=f"confidant-jobs-{i}")
                for i in range(self._worker_count)
            ]
        return self._queue

    async def _work(self, queue: asyncio.Queue[JobRecord]) -> None:
        while True:
            job = await queue.get()
            try:
                await self._run(job)
            except Exception:  # _run logs its own failures; this guards the worker itself
                logger.exception("job worker error on job %s", job.job_id)
            finally:
                queue.task_done()

    async def _run(self, job: JobRecord) -> None:
        handler = self._handlers.get(job.kind)
        if handler is None:
            logger.warning(
                "no handler for job kind %r; dropped job %s (session %s, turn %d)",
                job.kind,
                job.job_id,
                job.session_id,
                job.turn,
            )
            return
        for attempt in range(1, self._max_attempts + 1):
            try:
                await asyncio.wait_for(handler(job), self._handler_timeout_s)
                return
            except Exception:
                if attempt == self._max_attempts:
                    logger.exception(
                        "job %s (%s) failed after %d attempts; dropped",
                        job.job_id,
                        job.kind,
                        attempt,
                    )
                    self.failed.append(job)
                    return
                delay = self._retry_delays[min(attempt - 1, len(self._retry_delays) - 1)]
                logger.warning(
                    "job %s (%s) failed on attempt %d/%d; retrying in %.2fs",
                    job.job_id,
                    job.kind,
                    attempt,
                    self._max_attempts,
                    delay,
                    exc_info=True,
                )
                await asyncio.sleep(delay)
