"""The job store on Firestore.

Layout (beside the session store's, confidant/sessions/firestore_store.py):

    jobs/{job_id}                                        outbox entry and idempotency mark
    users/{uid}/emotions/{job_id}                        emotion snapshots
    users/{uid}/apps/{app}/sessions/{sid}/meta/summary   the session's rolling summary
    users/{uid}/memories/{id}                            memories, `embedding` a Firestore Vector
    job_failures/{auto}                                  poison deliveries, for inspection

The summary is a document of its own, not a field of the session: a job writing the session
document would change its update time and so fail the commit of a turn running meanwhile.
Memory search uses Firestore vector search (`find_nearest`, cosine), which the emulator
supports too (measured: see docs/performance.md); the cloud needs the vector index Terraform
declares (infra/modules/confidant/firestore.tf).
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from google.api_core.exceptions import Aborted
from google.cloud import firestore
from google.cloud.firestore_v1.async_transaction import AsyncTransaction
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.base_vector_query import DistanceMeasure
from google.cloud.firestore_v1.vector import Vector

from confidant.jobs.effects import (
    ABANDONED,
    EMOTIONS,
    FINAL_STATUSES,
    PENDING,
    REQUEUED_NOTE,
    DeleteMemory,
    JobEffect,
    JobOutcome,
    PutMemory,
    PutRecord,
    PutSummary,
    effect_key,
)
from confidant.jobs.sqlite_store import snapshot_json
from confidant.ports import JobRecord, MemoryRecord
from confidant.sessions import codec
from confidant.sessions.firestore_store import (
    JOB_FAILURES,
    JOBS,
    MEMORIES,
    USERS,
    job_from_document,
    memory_document,
    outbox_document,
    session_ref,
)
from confidant.sessions.records import SessionKey

META = "meta"
SUMMARY_DOC = "summary"
FAILURE_TTL = timedelta(days=7)


logger = logging.getLogger(__name__)


class FirestoreJobStore:
    def __init__(self, client: firestore.AsyncClient) -> None:
        self.client = client

    def _mark(self, job: JobRecord) -> firestore.AsyncDocumentReference:
        return self.client.collection(JOBS).document(effect_key(job))

    def _user(self, user_id: str) -> firestore.AsyncDocumentReference:
        return self.client.collection(USERS).document(user_id)

    def _session(self, user_id: str, app: str, session_id: str) -> firestore.AsyncDocumentReference:
        return session_ref(self.client, SessionKey(user_id, app, session_id))

    def _summary(self, user_id: str, app: str, session_id: str) -> firestore.AsyncDocumentReference:
        return self._session(user_id, app, session_id).collection(META).document(SUMMARY_DOC)

    async def job_status(self, job: JobRecord) -> str | None:
        snap = await self._mark(job).get(field_paths=["status"])
        return snap.get("status") if snap.exists else None

    async def apply(self, job: JobRecord, effect: JobEffect, *, now: float) -> JobOutcome:
        mark_ref = self._mark(job)
        session_doc = self._session(job.user_id, job.app, job.session_id)
        summaries = [op for op in effect.operations if isinstance(op, PutSummary)]
        summary_ref = self._summary(job.user_id, job.app, job.session_id)
        refs = [mark_ref, session_doc] + ([summary_ref] if summaries else [])

        @firestore.async_transactional
        async def run(transaction: AsyncTransaction) -> JobOutcome:
            # All reads in one RPC, before any write (Firestore's transaction rule).
            snaps = {
                snap.reference.path: snap
                async for snap in self.client.get_all(refs, transaction=transaction)
            }
            mark = snaps[mark_ref.path]
            if mark.exists and mark.get("status") in FINAL_STATUSES:
                return JobOutcome.DUPLICATE
            if not snaps[session_doc.path].exists:
                self._put_mark(transaction, job, JobOutcome.GONE, "session gone", now)
                return JobOutcome.GONE
            stored = snaps.get(summary_ref.path)
            if (
                summaries
                and stored is not None
                and stored.exists
                and (stored.get("covers_seq") >= max(op.covers_seq for op in summaries))
            ):
                self._put_mark(transaction, job, JobOutcome.STALE, "summary is newer", now)
                return JobOutcome.STALE
            for op in effect.operations:
                self._write(transaction, job, op, summary_ref)
            self._put_mark(transaction, job, JobOutcome.DONE, effect.note, now)
            return JobOutcome.DONE

        return await run(self.client.transaction())

    def _write(
        self,
        transaction: AsyncTransaction,
        job: JobRecord,
        op: PutRecord | PutSummary | PutMemory | DeleteMemory,
        summary_ref: firestore.AsyncDocumentReference,
    ) -> None:
        if isinstance(op, PutSummary):
            transaction.set(
                summary_ref,
                {
                    "text": op.text,
                    "covers_seq": op.covers_seq,
                    "turn": op.turn,
                    "updated_at": job.created_at.timestamp(),
                },
            )
        elif isinstance(op, PutRecord):
            transaction.set(
                self._user(job.user_id).collection(op.collection).document(op.id),
                op.data | {"app": op.app, "session_id": op.session_id, "created_at": op.created_at},
            )
        elif isinstance(op, PutMemory):
            transaction.set(
                self._user(job.user_id).collection(MEMORIES).document(op.record.id),
                memory_document(op.record),
            )
        else:
            transaction.delete(self._user(job.user_id).collection(MEMORIES).document(op.memory_id))

    def _put_mark(
        self, writer: Any, job: JobRecord, outcome: JobOutcome, note: str, now: float
    ) -> None:
        # Merge: an outbox entry written with the turn keeps its fields (and its TTL).
        writer.set(
            self._mark(job),
            outbox_document(job, outcome.value) | {"note": note[:500], "done_at": now},
            merge=True,
        )

    async def mark(self, job: JobRecord, outcome: JobOutcome, *, note: str, now: float) -> None:
        batch = self.client.batch()
        self._put_mark(batch, job, outcome, note, now)
        await batch.commit()

    async def record_failure(
        self, *, reason: str, body: str, user_id: str | None, now: float
    ) -> None:
        received = datetime.fromtimestamp(now, tz=UTC)
        await self.client.collection(JOB_FAILURES).add(
            {
                "reason": reason,
                "body": body,
                "user_id": user_id,
                "received_at": now,
                "expire_at": received + FAILURE_TTL,
            }
        )

    async def failures(self, limit: int = 50) -> list[dict[str, Any]]:
        query = (
            self.client.collection(JOB_FAILURES)
            .order_by("received_at", direction=firestore.Query.DESCENDING)
            .limit(limit)
        )
        return [snap.to_dict() async for snap in query.stream()]

    async def due_jobs(self, *, created_before: float, limit: int) -> list[JobRecord]:
        # Needs the composite index (status, created_at) declared in Terraform.
        query = (
            self.client.collection(JOBS)
            .where(filter=FieldFilter("status", "==", PENDING))
            .where(filter=FieldFilter("created_at", "<", created_before))
            .order_by("created_at")
            .limit(limit)
        )
        return [job_from_document(snap.to_dict()) async for snap in query.stream()]

    async def note_swept(self, job_ids: list[str], *, max_sweeps: int) -> None:
        for job_id in job_ids:
            ref = self.client.collection(JOBS).document(job_id)

            @firestore.async_transactional
            async def count(transaction: AsyncTransaction, ref=ref) -> None:
                snap = await ref.get(transaction=transaction)
                if not snap.exists or snap.get("status") != PENDING:
                    return
                sweeps = (snap.to_dict().get("sweeps") or 0) + 1
                status = ABANDONED if sweeps >= max_sweeps else PENDING
                transaction.update(ref, {"sweeps": sweeps, "status": status})

            try:
                await count(self.client.transaction())
            except (Aborted, ValueError) as error:
                # The transaction gave up on the document's lock ("Failed to commit transaction
                # in 5 attempts" from Aborted): a handler holds the job, so it is being worked
                # on, not stuck; its count can wait for the next sweep.
                if not isinstance(error, Aborted) and not isinstance(error.__cause__, Aborted):
                    raise
                logger.warning("the sweep skipped counting job %s: it is locked", job_id)

    async def stuck_jobs(
        self,
        *,
        statuses: Sequence[str],
        limit: int,
        kinds: Sequence[str] = (),
        job_ids: Sequence[str] = (),
    ) -> list[JobRecord]:
        # One equality query per status (the sweep's (status, created_at) index), merged. The
        # kind and id filters are applied while reading (stuck jobs are few; no extra index),
        # before the limit.
        found: list[list[tuple[Any, JobRecord]]] = []
        for status in statuses:
            query = (
                self.client.collection(JOBS)
                .where(filter=FieldFilter("status", "==", status))
                .order_by("created_at")
            )
            matching: list[tuple[Any, JobRecord]] = []
            async for snap in query.stream():
                job = job_from_document(snap.to_dict())
                if (kinds and job.kind not in kinds) or (job_ids and job.job_id not in job_ids):
                    continue
                matching.append((snap.get("created_at"), job))
                if len(matching) >= limit:
                    break
            found.append(matching)
        merged = heapq.merge(*found, key=lambda pair: pair[0])
        return [job for _, job in merged][:limit]

    async def requeue(self, job_ids: Sequence[str], *, statuses: Sequence[str]) -> list[str]:
        requeued = []
        for job_id in job_ids:
            ref = self.client.collection(JOBS).document(job_id)

            @firestore.async_transactional
            async def reset(transaction: AsyncTransaction, ref=ref) -> bool:
                snap = await ref.get(transaction=transaction)
                if not snap.exists or snap.get("status") not in statuses:
                    return False
                transaction.update(ref, {"status": PENDING, "sweeps": 0, "note": REQUEUED_NOTE})
                return True

            if await reset(self.client.transaction()):
                requeued.append(job_id)
        return requeued

    async def summary(self, user_id: str, app: str, session_id: str) -> dict[str, Any] | None:
        snap = await self._summary(user_id, app, session_id).get()
        if not snap.exists:
            return None
        return {"text": snap.get("text"), "covers_seq": snap.get("covers_seq")}

    async def emotions(
        self, user_id: str, *, app: str | None, session_id: str | None, limit: int
    ) -> list[dict[str, Any]]:
        # One fluent chain per filter combination, so each query's index is declared (and the
        # drift test can follow it): tests/infra/test_drift.py.
        emotions = self._user(user_id).collection(EMOTIONS)
        if app is not None and session_id is not None:
            query = (
                emotions.where(filter=FieldFilter("app", "==", app))
                .where(filter=FieldFilter("session_id", "==", session_id))
                .order_by("created_at", direction=firestore.Query.DESCENDING)
                .limit(limit)
            )
        elif app is not None:
            query = (
                emotions.where(filter=FieldFilter("app", "==", app))
                .order_by("created_at", direction=firestore.Query.DESCENDING)
                .limit(limit)
            )
        elif session_id is not None:
            query = (
                emotions.where(filter=FieldFilter("session_id", "==", session_id))
                .order_by("created_at", direction=firestore.Query.DESCENDING)
                .limit(limit)
            )
        else:
            query = emotions.order_by("created_at", direction=firestore.Query.DESCENDING).limit(
                limit
            )
        snaps = [snap async for snap in query.stream()]
        return [
            snapshot_json(s.id, s.get("app"), s.get("session_id"), s.get("created_at"), s.to_dict())
            for s in reversed(snaps)
        ]

    async def search_memories(
        self, user_id: str, vector: list[float], *, app: str | None, limit: int
    ) -> list[MemoryRecord]:
        memories = self._user(user_id).collection(MEMORIES)
        if app is not None:
            nearest = memories.where(filter=FieldFilter("app", "==", app)).find_nearest(
                vector_field="embedding",
                query_vector=Vector(vector),
                distance_measure=DistanceMeasure.COSINE,
                limit=limit,
            )
        else:
            nearest = memories.find_nearest(
                vector_field="embedding",
                query_vector=Vector(vector),
                distance_measure=DistanceMeasure.COSINE,
                limit=limit,
            )
        return [codec.memory_from_row(snap.to_dict()) async for snap in nearest.stream()]
