"""The job service: one place that runs post-turn jobs, whatever transport delivered them.

Pub/Sub push deliveries (the `jobs` function target) and the embedded in-process bus both call
`JobService.handle`; the sweep (the `sweep` target, and a periodic task in the embedded default)
republishes what the outbox still holds. Handlers are looked up by kind in a registry, so an app
can add a kind (`register_job_handler`) without touching this module.

A delivery goes: mark already present → DUPLICATE (no model call); handler computes a
`JobEffect` outside any transaction; the store applies it with its mark in one transaction.
The whole attempt is bounded by `deadline_s` (below the subscription's ack deadline), so a
handler never runs past the point where Pub/Sub would redeliver anyway.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context

from confidant.errors import NotFoundError
from confidant.jobs.effects import FINAL_STATUSES, JobEffect, JobOutcome
from confidant.jobs.errors import (
    MalformedEnvelopeError,
    PoisonJobError,
    StaleJobError,
    TransientJobError,
)
from confidant.jobs.extractor import Extractor
from confidant.jobs.store import JobStore
from confidant.observability.tracing import tracer
from confidant.ports import Embedder, JobBus, JobRecord
from confidant.sessions.store import SessionStore

logger = logging.getLogger(__name__)

_MAX_RECORDED_BODY = 2000


@dataclass(frozen=True)
class JobDeps:
    """What a handler may use (process-wide, shared by every job)."""

    store: JobStore
    sessions: SessionStore
    embedder: Embedder
    extractor: Extractor
    # App services an app's own job kinds use, by name (e.g. "relationship"); empty by default.
    services: Mapping[str, Any] = field(default_factory=dict)


JobHandler = Callable[[JobRecord, JobDeps], Awaitable[JobEffect]]

_HANDLERS: dict[str, JobHandler] = {}


def register_job_handler(kind: str, handler: JobHandler) -> None:
    """Make `kind` a job kind the service can run (apps add theirs in their package init)."""
    if _HANDLERS.get(kind, handler) is not handler:
        raise ValueError(f"job kind {kind!r} already has a handler")
    _HANDLERS[kind] = handler


def job_handlers() -> dict[str, JobHandler]:
    import confidant.jobs.handlers
    import confidant.relationship.jobs  # noqa: F401  (the relationship app's profile proposals)

    return dict(_HANDLERS)


@dataclass(frozen=True)
class SweepReport:
    republished: int
    failed: int


class JobService:
    def __init__(
        self,
        deps: JobDeps,
        handlers: Mapping[str, JobHandler] | None = None,
        *,
        deadline_s: float = 50.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.deps = deps
        self.handlers = dict(job_handlers() if handlers is None else handlers)
        self.deadline_s = deadline_s
        self.clock = clock

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self.handlers)

    async def handle(self, job: JobRecord) -> JobOutcome:
        """Run one delivery of `job`; the outcome says whether to acknowledge it.

        Each delivery is one `confidant.job` span (kind, app, turn, outcome; ids, never the
        message): the extractor's model call nests under it through ADK's instrumentation.
        """
        attributes = {"confidant.job.kind": job.kind, "confidant.app": job.app}
        # A trace of its own: a job runs after its turn's trace has ended, often elsewhere.
        with tracer.start_as_current_span(
            "confidant.job", context=otel_context.Context(), attributes=attributes
        ) as span:
            span.set_attribute("confidant.job.turn", job.turn)
            try:
                outcome = await asyncio.wait_for(self._run(job), self.deadline_s)
            except TimeoutError:
                logger.warning(
                    "job %s (%s) ran past %.0fs; will be retried",
                    job.job_id,
                    job.kind,
                    self.deadline_s,
                )
                outcome = JobOutcome.RETRY
            span.set_attribute("confidant.job.outcome", outcome.value)
            return outcome

    async def handle_push(self, body: bytes) -> JobOutcome:
        """A Pub/Sub push request body: malformed ones are recorded and acknowledged."""
        from confidant.jobs.envelope import decode_push_envelope

        try:
            job = decode_push_envelope(json.loads(body))
        except (MalformedEnvelopeError, ValueError) as exc:
            reason = exc.message if isinstance(exc, MalformedEnvelopeError) else "body is not JSON"
            logger.error("poison job delivery: %s", reason)
            await self.deps.store.record_failure(
                reason=reason,
                body=body[:_MAX_RECORDED_BODY].decode(errors="replace"),
                user_id=None,
                now=self.clock(),
            )
            return JobOutcome.POISON
        return await self.handle(job)

    async def _run(self, job: JobRecord) -> JobOutcome:
        store = self.deps.store
        handler = self.handlers.get(job.kind)
        try:
            if handler is None:
                raise PoisonJobError(f"no handler for job kind {job.kind!r}")
            if await store.job_status(job) in FINAL_STATUSES:
                return JobOutcome.DUPLICATE  # skip the model call: the effect is there
            effect = await handler(job, self.deps)
            outcome = await store.apply(job, effect, now=self.clock())
        except StaleJobError as exc:
            await store.mark(job, JobOutcome.STALE, note=str(exc), now=self.clock())
            return JobOutcome.STALE
        except NotFoundError as exc:
            await store.mark(job, JobOutcome.GONE, note=str(exc), now=self.clock())
            return JobOutcome.GONE
        except PoisonJobError as exc:
            logger.error("poison job %s (%s): %s", job.job_id, job.kind, exc)
            await store.mark(job, JobOutcome.POISON, note=str(exc), now=self.clock())
            await store.record_failure(
                reason=str(exc),
                body=job.model_dump_json()[:_MAX_RECORDED_BODY],
                user_id=job.user_id,
                now=self.clock(),
            )
            return JobOutcome.POISON
        except TransientJobError as exc:
            logger.warning("job %s (%s) failed, will be retried: %s", job.job_id, job.kind, exc)
            return JobOutcome.RETRY
        except Exception:
            # Unknown failures are retried: the dead-letter policy caps how often.
            logger.exception("job %s (%s) failed; will be retried", job.job_id, job.kind)
            return JobOutcome.RETRY
        logger.info("job %s (%s): %s", job.job_id, job.kind, outcome.value)
        return outcome

    async def run_for_bus(self, job: JobRecord) -> None:
        """The in-process bus's handler: a RETRY outcome raises so the bus retries it."""
        outcome = await self.handle(job)
        if outcome is JobOutcome.RETRY:
            raise TransientJobError(f"job {job.job_id} ({job.kind}) will be retried")

    async def sweep(
        self, bus: JobBus, *, limit: int, grace_s: float, max_sweeps: int
    ) -> SweepReport:
        return await sweep_outbox(
            self.deps.store,
            bus,
            self.kinds,
            limit=limit,
            created_before=self.clock() - grace_s,
            max_sweeps=max_sweeps,
        )


async def sweep_outbox(
    store: JobStore,
    bus: JobBus,
    kinds: tuple[str, ...],
    *,
    limit: int,
    created_before: float,
    max_sweeps: int,
) -> SweepReport:
    """Republish pending outbox entries created before the cut-off, oldest first, at most
    `limit` (the `sweep` target needs only a store and a bus: no model, no handlers run).

    A job is pending until a handler marks it, so this republishes both jobs whose publish
    failed and jobs still retrying; a duplicate has no second effect, and `max_sweeps` stops a
    job that can never succeed from being republished forever.
    """
    due = [
        job
        for job in await store.due_jobs(created_before=created_before, limit=limit)
        if job.kind in kinds
    ]
    if not due:
        return SweepReport(0, 0)
    try:
        await bus.publish(due)
    except Exception:
        logger.exception("the sweep could not republish %d job(s)", len(due))
        return SweepReport(0, len(due))
    await store.note_swept([job.job_id for job in due], max_sweeps=max_sweeps)
    return SweepReport(len(due), 0)


def outcome_json(outcome: JobOutcome) -> dict[str, Any]:
    return {"outcome": outcome.value, "acknowledged": outcome.acknowledged}
