"""The job store on the embedded SQLite file (same connection as the session store).

SQLite's `BEGIN IMMEDIATE` serialises writers across processes, so the mark check and the
effect in `apply` are one atomic step, as a Firestore transaction makes them in the cloud.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import aiosqlite

from confidant.jobs.effects import (
    ABANDONED,
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
from confidant.ports import JobRecord, MemoryRecord
from confidant.sessions import codec
from confidant.sessions.sqlite_store import SqliteSessionStore

# The embedded store ranks in Python: a user's memories are few, and this bounds the scan.
MAX_SCANNED_MEMORIES = 2000


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _in(column: str, values: Sequence[str]) -> str:
    """`column IN (?, ?, …)` with one placeholder per value (the values are bound, never
    spliced into the SQL)."""
    return f"{column} IN ({', '.join('?' * len(values))})"


def job_from_row(row: aiosqlite.Row) -> JobRecord:
    from datetime import UTC, datetime

    return JobRecord(
        job_id=row["job_id"],
        kind=row["kind"],
        user_id=row["user_id"],
        app=row["app"],
        session_id=row["session_id"],
        turn=row["turn"],
        payload=codec.loads_dict(row["payload"]),
        created_at=datetime.fromtimestamp(row["created_at"], tz=UTC),
    )


class SqliteJobStore:
    def __init__(self, sessions: SqliteSessionStore) -> None:
        self._sessions = sessions

    async def job_status(self, job: JobRecord) -> str | None:
        async with (
            self._sessions.read() as conn,
            conn.execute("SELECT status FROM jobs WHERE job_id = ?", (effect_key(job),)) as cur,
        ):
            row = await cur.fetchone()
        return None if row is None else row["status"]

    async def apply(self, job: JobRecord, effect: JobEffect, *, now: float) -> JobOutcome:
        key = effect_key(job)
        async with self._sessions.transaction() as conn:
            async with conn.execute("SELECT status FROM jobs WHERE job_id = ?", (key,)) as cur:
                mark = await cur.fetchone()
            if mark is not None and mark["status"] in FINAL_STATUSES:
                return JobOutcome.DUPLICATE
            async with conn.execute(
                "SELECT 1 FROM sessions WHERE user_id = ? AND app = ? AND session_id = ?",
                (job.user_id, job.app, job.session_id),
            ) as cur:
                if await cur.fetchone() is None:
                    outcome, note = JobOutcome.GONE, "the session no longer exists"
                    await self._put_mark(conn, job, outcome, note, now)
                    return outcome
            outcome = await self._apply_operations(conn, job, effect)
            await self._put_mark(conn, job, outcome, effect.note, now)
        return outcome

    async def _apply_operations(
        self, conn: aiosqlite.Connection, job: JobRecord, effect: JobEffect
    ) -> JobOutcome:
        for op in effect.operations:
            if isinstance(op, PutSummary):
                async with conn.execute(
                    "SELECT covers_seq FROM summaries WHERE user_id = ? AND app = ?"
                    " AND session_id = ?",
                    (job.user_id, job.app, job.session_id),
                ) as cur:
                    stored = await cur.fetchone()
                if stored is not None and stored["covers_seq"] >= op.covers_seq:
                    return JobOutcome.STALE  # nothing written: the whole effect is dropped
        for op in effect.operations:
            if isinstance(op, PutSummary):
                await conn.execute(
                    "INSERT OR REPLACE INTO summaries (user_id, app, session_id, text,"
                    " covers_seq, turn, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        job.user_id,
                        job.app,
                        job.session_id,
                        op.text,
                        op.covers_seq,
                        op.turn,
                        job.created_at.timestamp(),
                    ),
                )
            elif isinstance(op, PutRecord):
                await conn.execute(
                    "INSERT OR REPLACE INTO user_records (user_id, collection, id, app,"
                    " session_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        job.user_id,
                        op.collection,
                        op.id,
                        op.app,
                        op.session_id,
                        codec.dumps(op.data),
                        op.created_at,
                    ),
                )
            elif isinstance(op, PutMemory):
                await self._sessions._put_memory(conn, op.record)
            elif isinstance(op, DeleteMemory):
                await conn.execute(
                    "DELETE FROM memories WHERE user_id = ? AND id = ?", (job.user_id, op.memory_id)
                )
        return JobOutcome.DONE

    async def _put_mark(
        self,
        conn: aiosqlite.Connection,
        job: JobRecord,
        outcome: JobOutcome,
        note: str,
        now: float,
    ) -> None:
        row = codec.job_to_row(job) | {"job_id": effect_key(job), "status": outcome.value}
        await conn.execute(
            f"INSERT OR IGNORE INTO jobs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            tuple(row.values()),
        )
        await conn.execute(
            "UPDATE jobs SET status = ?, note = ?, done_at = ? WHERE job_id = ?",
            (outcome.value, note[:500], now, effect_key(job)),
        )

    async def mark(self, job: JobRecord, outcome: JobOutcome, *, note: str, now: float) -> None:
        async with self._sessions.transaction() as conn:
            await self._put_mark(conn, job, outcome, note, now)

    async def record_failure(
        self, *, reason: str, body: str, user_id: str | None, now: float
    ) -> None:
        async with self._sessions.transaction() as conn:
            await conn.execute(
                "INSERT INTO job_failures (user_id, reason, body, received_at) VALUES (?, ?, ?, ?)",
                (user_id, reason, body, now),
            )

    async def failures(self, limit: int = 50) -> list[dict[str, Any]]:
        async with (
            self._sessions.read() as conn,
            conn.execute("SELECT * FROM job_failures ORDER BY id DESC LIMIT ?", (limit,)) as cur,
        ):
            return [dict(row) for row in await cur.fetchall()]

    async def due_jobs(self, *, created_before: float, limit: int) -> list[JobRecord]:
        async with (
            self._sessions.read() as conn,
            conn.execute(
                "SELECT * FROM jobs WHERE status = ? AND created_at < ?"
                " ORDER BY created_at LIMIT ?",
                (PENDING, created_before, limit),
            ) as cur,
        ):
            return [job_from_row(row) for row in await cur.fetchall()]

    async def note_swept(self, job_ids: list[str], *, max_sweeps: int) -> None:
        async with self._sessions.transaction() as conn:
            for job_id in job_ids:
                await conn.execute(
                    "UPDATE jobs SET sweeps = sweeps + 1, status = CASE WHEN sweeps + 1 >= ?"
                    " THEN ? ELSE status END WHERE job_id = ? AND status = ?",
                    (max_sweeps, ABANDONED, job_id, PENDING),
                )

    async def stuck_jobs(
        self,
        *,
        statuses: Sequence[str],
        limit: int,
        kinds: Sequence[str] = (),
        job_ids: Sequence[str] = (),
    ) -> list[JobRecord]:
        where, args = [_in("status", statuses)], [*statuses]
        for column, values in (("kind", kinds), ("job_id", job_ids)):
            if values:
                where.append(_in(column, values))
                args += values
        async with (
            self._sessions.read() as conn,
            conn.execute(
                f"SELECT * FROM jobs WHERE {' AND '.join(where)} ORDER BY created_at LIMIT ?",
                (*args, limit),
            ) as cur,
        ):
            return [job_from_row(row) for row in await cur.fetchall()]

    async def requeue(self, job_ids: Sequence[str], *, statuses: Sequence[str]) -> list[str]:
        requeued = []
        async with self._sessions.transaction() as conn:
            for job_id in job_ids:
                cur = await conn.execute(
                    "UPDATE jobs SET status = ?, sweeps = 0, note = ? WHERE job_id = ?"
                    f" AND {_in('status', statuses)}",
                    (PENDING, REQUEUED_NOTE, job_id, *statuses),
                )
                if cur.rowcount:
                    requeued.append(job_id)
        return requeued

    async def summary(self, user_id: str, app: str, session_id: str) -> dict[str, Any] | None:
        async with (
            self._sessions.read() as conn,
            conn.execute(
                "SELECT text, covers_seq FROM summaries WHERE user_id = ? AND app = ?"
                " AND session_id = ?",
                (user_id, app, session_id),
            ) as cur,
        ):
            row = await cur.fetchone()
        return None if row is None else {"text": row["text"], "covers_seq": row["covers_seq"]}

    async def emotions(
        self, user_id: str, *, app: str | None, session_id: str | None, limit: int
    ) -> list[dict[str, Any]]:
        sql, args = (
            "SELECT * FROM user_records WHERE user_id = ? AND collection = ?",
            [user_id, "emotions"],
        )
        for column, value in (("app", app), ("session_id", session_id)):
            if value is not None:
                sql += f" AND {column} = ?"
                args.append(value)
        sql += " ORDER BY created_at DESC LIMIT ?"
        async with self._sessions.read() as conn, conn.execute(sql, (*args, limit)) as cur:
            rows = await cur.fetchall()
        return [
            snapshot_json(
                row["id"], row["app"], row["session_id"], row["created_at"], json.loads(row["data"])
            )
            for row in reversed(rows)
        ]

    async def search_memories(
        self, user_id: str, vector: list[float], *, app: str | None, limit: int
    ) -> list[MemoryRecord]:
        memories = await self._sessions.list_memories(user_id, app=app, limit=MAX_SCANNED_MEMORIES)
        scored = [(cosine(vector, m.embedding), m) for m in memories if m.embedding]
        scored.sort(key=lambda pair: -pair[0])
        return [m for _, m in scored[:limit]]


def snapshot_json(
    snapshot_id: str, app: str, session_id: str | None, created_at: float, data: dict[str, Any]
) -> dict[str, Any]:
    """An emotion snapshot as the context source and the API hand it out."""
    from datetime import UTC, datetime

    return {
        "id": snapshot_id,
        "user_mood": data.get("user_mood"),
        "other_mood": data.get("other_mood"),
        "trend": data.get("trend"),
        "tags": data.get("tags", []),
        "session_id": session_id,
        "person_id": data.get("person_id"),
        "app": app,
        "turn": data.get("turn"),
        "created_at": datetime.fromtimestamp(created_at, tz=UTC).isoformat(),
    }
