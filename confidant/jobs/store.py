"""The job store port: the outbox and idempotency marks, and what jobs produce.

One implementation per backend (SQLite embedded, Firestore in cloud), each over the same
database as the session store. `apply` is the heart of "exactly once in effect": the job's
operations and its mark commit in one transaction, and a mark already present means the job
has had its effect.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from confidant.jobs.effects import JobEffect, JobOutcome
from confidant.ports import JobRecord, MemoryRecord


class JobStore(Protocol):
    async def job_status(self, job: JobRecord) -> str | None:
        """The outbox status of the job's mark (`pending`, an outcome, …), None when absent."""
        ...

    async def apply(self, job: JobRecord, effect: JobEffect, *, now: float) -> JobOutcome:
        """In one transaction: DUPLICATE if marked; GONE if the session is gone; STALE if a
        summary is older than the stored one; else apply every operation and mark DONE."""
        ...

    async def mark(self, job: JobRecord, outcome: JobOutcome, *, note: str, now: float) -> None:
        """Record an outcome without an effect (poison, stale, gone)."""
        ...

    async def record_failure(
        self, *, reason: str, body: str, user_id: str | None, now: float
    ) -> None:
        """Keep a poison delivery for inspection (kept for a week)."""
        ...

    async def due_jobs(self, *, created_before: float, limit: int) -> list[JobRecord]:
        """Pending outbox entries created before the cut-off, oldest first."""
        ...

    async def note_swept(self, job_ids: list[str], *, max_sweeps: int) -> None:
        """Count a republish of each job; one republished `max_sweeps` times is abandoned."""
        ...

    async def stuck_jobs(
        self,
        *,
        statuses: Sequence[str],
        limit: int,
        kinds: Sequence[str] = (),
        job_ids: Sequence[str] = (),
    ) -> list[JobRecord]:
        """The oldest `limit` outbox entries in one of `statuses` (poison, abandoned) and, when
        given, of one of `kinds` and among `job_ids`: what an operator may replay once the cause
        is fixed (the filters apply before the limit)."""
        ...

    async def requeue(self, job_ids: Sequence[str], *, statuses: Sequence[str]) -> list[str]:
        """Set each job still in one of `statuses` back to pending with its sweep count reset,
        so its next delivery runs; the ids actually requeued (a job handled meanwhile is not)."""
        ...

    async def summary(self, user_id: str, app: str, session_id: str) -> dict[str, Any] | None:
        """The session's rolling summary: {"text", "covers_seq"} or None."""
        ...

    async def emotions(
        self, user_id: str, *, app: str | None, session_id: str | None, limit: int
    ) -> list[dict[str, Any]]:
        """The latest `limit` emotion snapshots, oldest first."""
        ...

    async def search_memories(
        self, user_id: str, vector: list[float], *, app: str | None, limit: int
    ) -> list[MemoryRecord]:
        """The user's memories nearest to `vector` (cosine), nearest first."""
        ...
