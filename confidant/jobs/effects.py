"""What a post-turn job does to storage, described so every backend applies it the same way.

A handler computes its result outside any transaction (the model call), as a `JobEffect`: a
list of storage-neutral operations. The job store then applies the operations together with
the job's idempotency mark in one transaction, so a redelivered or concurrently delivered job
has exactly one effect.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from confidant.ports import JobRecord, MemoryRecord

# Collections of per-user records written by jobs (users/{uid}/{collection}/{id}).
EMOTIONS = "emotions"


class JobOutcome(StrEnum):
    """What handling one delivery came to (every outcome but RETRY acknowledges the message)."""

    DONE = "done"  # the effect was applied, with its mark
    DUPLICATE = "duplicate"  # the mark was already there: no second effect
    STALE = "stale"  # superseded (an older summary after a newer one): recorded, no effect
    GONE = "gone"  # the session or user was deleted meanwhile: nothing to do
    POISON = "poison"  # malformed or unhandleable: recorded, never retried
    RETRY = "retry"  # a transient failure: Pub/Sub must deliver it again

    @property
    def acknowledged(self) -> bool:
        return self is not JobOutcome.RETRY


# Outbox statuses that mean "handled": the sweep never republishes these.
FINAL_STATUSES = frozenset(
    {JobOutcome.DONE, JobOutcome.DUPLICATE, JobOutcome.STALE, JobOutcome.GONE, JobOutcome.POISON}
)
PENDING = "pending"
ABANDONED = "abandoned"  # republished by the sweep too often; left for an operator
# What `confidant jobs replay` may send again once an operator has fixed the cause.
REPLAYABLE_STATUSES = (JobOutcome.POISON.value, ABANDONED)
REQUEUED_NOTE = "requeued by an operator (confidant jobs replay)"


@dataclass(frozen=True)
class PutRecord:
    """Create or replace a per-user record (e.g. an emotion snapshot)."""

    collection: str
    id: str
    app: str
    session_id: str | None
    created_at: float
    data: dict[str, Any]


@dataclass(frozen=True)
class PutSummary:
    """Replace the session's rolling summary, only if it covers a later event than the stored one.

    Summaries never move back in time: out-of-order deliveries of older turns are STALE.
    """

    text: str
    covers_seq: int
    turn: int


@dataclass(frozen=True)
class PutMemory:
    record: MemoryRecord  # with its embedding


@dataclass(frozen=True)
class DeleteMemory:
    memory_id: str


Operation = PutRecord | PutSummary | PutMemory | DeleteMemory


@dataclass(frozen=True)
class JobEffect:
    operations: list[Operation] = field(default_factory=list)
    note: str = ""  # a short, human-readable account kept on the mark (logs, inspection)


def job_id(user_id: str, app: str, session_id: str, turn: int, kind: str) -> str:
    """The idempotency key of a job: one per (session, turn, kind), stable across retries.

    Hashed because Firestore document ids cannot hold every character a user id may contain.
    """
    raw = "\x1f".join((user_id, app, session_id, str(turn), kind))
    return f"{kind}-{hashlib.sha256(raw.encode()).hexdigest()[:32]}"


def effect_key(job: JobRecord) -> str:
    """The mark a job's effect is recorded under: derived from the job, not trusted from it."""
    return job_id(job.user_id, job.app, job.session_id, job.turn, job.kind)
