"""The embedded session store: one SQLite file, safe across processes (BEGIN IMMEDIATE)."""

from __future__ import annotations

import json
from typing import Any

import aiosqlite

from confidant.errors import NotFoundError, SessionBusyError, StaleTurnError
from confidant.ports import MemoryRecord
from confidant.profiles.ops import ProfileOp, apply_ops
from confidant.profiles.store import ProfileVersion
from confidant.sessions import codec
from confidant.sessions.records import (
    EventChunk,
    SessionKey,
    SessionRecord,
    TailPolicy,
    TurnWrite,
    acquire_lease,
    apply_write,
    check_write,
    new_record,
    release_lease,
    renew_lease,
)
from confidant.sessions.store import EventPage, LoadedSession, SessionExistsError
from confidant.sqlite import SqliteFile

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
  user_id TEXT NOT NULL, app TEXT NOT NULL, session_id TEXT NOT NULL,
  revision INTEGER NOT NULL, next_seq INTEGER NOT NULL, state TEXT NOT NULL, tail TEXT NOT NULL,
  summary TEXT, lease_holder TEXT, lease_expires REAL NOT NULL DEFAULT 0,
  created_at REAL NOT NULL, updated_at REAL NOT NULL,
  PRIMARY KEY (user_id, app, session_id));
CREATE INDEX IF NOT EXISTS sessions_by_app ON sessions (app, updated_at);
CREATE TABLE IF NOT EXISTS event_chunks (
  user_id TEXT NOT NULL, app TEXT NOT NULL, session_id TEXT NOT NULL,
  first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, events TEXT NOT NULL,
  PRIMARY KEY (user_id, app, session_id, first_seq));
CREATE TABLE IF NOT EXISTS app_states (app TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS user_states (
  user_id TEXT NOT NULL, app TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (user_id, app));
CREATE TABLE IF NOT EXISTS memories (
  id TEXT PRIMARY KEY, user_id TEXT NOT NULL, app TEXT NOT NULL, kind TEXT NOT NULL,
  text TEXT NOT NULL, data TEXT NOT NULL, session_id TEXT, created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS memories_by_user ON memories (user_id, created_at);
CREATE TABLE IF NOT EXISTS profiles (user_id TEXT PRIMARY KEY, profile TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  job_id TEXT PRIMARY KEY, kind TEXT NOT NULL, user_id TEXT NOT NULL, app TEXT NOT NULL,
  session_id TEXT NOT NULL, turn INTEGER NOT NULL, payload TEXT NOT NULL,
  created_at REAL NOT NULL, status TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS summaries (
  user_id TEXT NOT NULL, app TEXT NOT NULL, session_id TEXT NOT NULL,
  text TEXT NOT NULL, covers_seq INTEGER NOT NULL, turn INTEGER NOT NULL, updated_at REAL NOT NULL,
  PRIMARY KEY (user_id, app, session_id));
CREATE TABLE IF NOT EXISTS user_records (
  user_id TEXT NOT NULL, collection TEXT NOT NULL, id TEXT NOT NULL, app TEXT NOT NULL,
  session_id TEXT, data TEXT NOT NULL, created_at REAL NOT NULL,
  PRIMARY KEY (user_id, collection, id));
CREATE INDEX IF NOT EXISTS user_records_by_time ON user_records (user_id, collection, created_at);
CREATE TABLE IF NOT EXISTS turn_queue (
  arrival INTEGER PRIMARY KEY AUTOINCREMENT, user_id TEXT NOT NULL, app TEXT NOT NULL,
  session_id TEXT NOT NULL, ticket TEXT NOT NULL UNIQUE, expires REAL NOT NULL);
CREATE INDEX IF NOT EXISTS turn_queue_by_session ON turn_queue (user_id, app, session_id, arrival);
CREATE TABLE IF NOT EXISTS turn_interrupts (
  user_id TEXT NOT NULL, app TEXT NOT NULL, session_id TEXT NOT NULL, holder TEXT NOT NULL,
  PRIMARY KEY (user_id, app, session_id));
CREATE TABLE IF NOT EXISTS job_failures (
  id INTEGER PRIMARY KEY AUTOINCREMENT, user_id TEXT, reason TEXT NOT NULL, body TEXT NOT NULL,
  received_at REAL NOT NULL);
-- Resumable streams (confidant/streaming/sqlite_log.py): each turn's parts, expiring.
CREATE TABLE IF NOT EXISTS stream_heads (
  user_id TEXT NOT NULL, app TEXT NOT NULL, session_id TEXT NOT NULL, turn_id TEXT NOT NULL,
  head TEXT NOT NULL, started_at REAL NOT NULL, expire_at REAL NOT NULL,
  PRIMARY KEY (user_id, app, session_id, turn_id));
CREATE INDEX IF NOT EXISTS stream_heads_by_expiry ON stream_heads (expire_at);
CREATE TABLE IF NOT EXISTS stream_parts (
  user_id TEXT NOT NULL, app TEXT NOT NULL, session_id TEXT NOT NULL, turn_id TEXT NOT NULL,
  first INTEGER NOT NULL, parts TEXT NOT NULL, expire_at REAL NOT NULL,
  PRIMARY KEY (user_id, app, session_id, turn_id, first));
CREATE INDEX IF NOT EXISTS stream_parts_by_expiry ON stream_parts (expire_at);
"""
# Columns added after the first release: (table, column, declaration) added to older files.
_ADDED_COLUMNS = (
    ("memories", "embedding", "TEXT"),
    ("jobs", "sweeps", "INTEGER NOT NULL DEFAULT 0"),
    ("jobs", "note", "TEXT"),
    ("jobs", "done_at", "REAL"),
)
# Tables holding a user's data (DELETE /v1/me), and those also keyed by session.
_USER_TABLES = (
    "sessions",
    "event_chunks",
    "user_states",
    "memories",
    "jobs",
    "summaries",
    "user_records",
    "job_failures",
    "profiles",
    "stream_heads",
    "stream_parts",
    "turn_queue",
    "turn_interrupts",
)
_SESSION_TABLES = (
    "event_chunks",
    "jobs",
    "summaries",
    "user_records",
    "stream_heads",
    "stream_parts",
    "turn_queue",
    "turn_interrupts",
)

# A session's rows in every table keyed by it (sessions, chunks, stream log, turn queue).
KEY_WHERE = "user_id = ? AND app = ? AND session_id = ?"


def key_args(key: SessionKey) -> tuple[str, str, str]:
    return (key.user_id, key.app, key.session_id)


async def _add_missing_columns(conn: aiosqlite.Connection) -> None:
    """Add the columns an older file lacks, under the write lock: two processes opening one file
    at once both found a column missing, and the second ALTER failed ("duplicate column name");
    with BEGIN IMMEDIATE the second waits, then finds it there."""
    await conn.execute("BEGIN IMMEDIATE")
    try:
        for table, column, declaration in _ADDED_COLUMNS:
            async with conn.execute(f"PRAGMA table_info({table})") as cur:
                present = {row["name"] for row in await cur.fetchall()}
            if column not in present:
                await conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
        await conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            await conn.execute("ROLLBACK")
        raise


class SqliteSessionStore(SqliteFile):
    """SessionStore on a SQLite file. One connection per store; a lock serialises its use."""

    schema = _SCHEMA

    def __init__(self, path: str, *, policy: TailPolicy | None = None) -> None:
        super().__init__(path)
        self.policy = policy or TailPolicy()

    async def _opened(self, conn: aiosqlite.Connection) -> None:
        await _add_missing_columns(conn)

    # The job store, stream log and turn queue share this connection and its lock.
    transaction = SqliteFile._transaction
    read = SqliteFile._use

    # -- rows ---------------------------------------------------------------------------------

    @staticmethod
    def _record(key: SessionKey, row: aiosqlite.Row) -> SessionRecord:
        return SessionRecord(
            key=key,
            state=codec.loads_dict(row["state"]),
            revision=row["revision"],
            next_seq=row["next_seq"],
            tail=json.loads(row["tail"]),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            summary=row["summary"],
            lease_holder=row["lease_holder"],
            lease_expires=row["lease_expires"],
        )

    async def _get_record(
        self, conn: aiosqlite.Connection, key: SessionKey
    ) -> SessionRecord | None:
        async with conn.execute(f"SELECT * FROM sessions WHERE {KEY_WHERE}", key_args(key)) as cur:
            row = await cur.fetchone()
        return None if row is None else self._record(key, row)

    async def _put_record(self, conn: aiosqlite.Connection, record: SessionRecord) -> None:
        await conn.execute(
            "INSERT OR REPLACE INTO sessions (user_id, app, session_id, revision, next_seq, state,"
            " tail, summary, lease_holder, lease_expires, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                *key_args(record.key),
                record.revision,
                record.next_seq,
                codec.dumps(record.state),
                codec.dumps(record.tail),
                record.summary,
                record.lease_holder,
                record.lease_expires,
                record.created_at,
                record.updated_at,
            ),
        )

    async def _scoped_state(self, conn: aiosqlite.Connection, key: SessionKey) -> tuple[dict, dict]:
        async with conn.execute("SELECT state FROM app_states WHERE app = ?", (key.app,)) as cur:
            app_row = await cur.fetchone()
        async with conn.execute(
            "SELECT state FROM user_states WHERE user_id = ? AND app = ?", (key.user_id, key.app)
        ) as cur:
            user_row = await cur.fetchone()
        return (
            codec.loads_dict(app_row["state"] if app_row else None),
            codec.loads_dict(user_row["state"] if user_row else None),
        )

    async def _apply_scoped_deltas(
        self, conn: aiosqlite.Connection, key: SessionKey, app_delta: dict, user_delta: dict
    ) -> tuple[dict, dict]:
        app_state, user_state = await self._scoped_state(conn, key)
        if app_delta:
            app_state = codec.apply_delta(app_state, app_delta)
            await conn.execute(
                "INSERT OR REPLACE INTO app_states (app, state) VALUES (?, ?)",
                (key.app, codec.dumps(app_state)),
            )
        if user_delta:
            user_state = codec.apply_delta(user_state, user_delta)
            await conn.execute(
                "INSERT OR REPLACE INTO user_states (user_id, app, state) VALUES (?, ?, ?)",
                (key.user_id, key.app, codec.dumps(user_state)),
            )
        return app_state, user_state

    # -- SessionStore ---------------------------------------------------------------------------

    async def create_session(
        self,
        key: SessionKey,
        *,
        state: dict[str, Any],
        app_delta: dict[str, Any],
        user_delta: dict[str, Any],
        now: float,
    ) -> LoadedSession:
        async with self._transaction() as conn:
            if await self._get_record(conn, key) is not None:
                raise SessionExistsError(f"session {key.session_id!r} already exists")
            record = new_record(key, state, now)
            await self._put_record(conn, record)
            app_state, user_state = await self._apply_scoped_deltas(
                conn, key, app_delta, user_delta
            )
        return LoadedSession(record, app_state, user_state)

    async def load(self, key: SessionKey) -> LoadedSession | None:
        async with self._use() as conn:
            record = await self._get_record(conn, key)
            if record is None:
                return None
            app_state, user_state = await self._scoped_state(conn, key)
        return LoadedSession(record, app_state, user_state)

    async def begin_turn(
        self, key: SessionKey, *, holder: str, now: float, ttl_s: float, create: bool
    ) -> LoadedSession:
        async with self._transaction() as conn:
            record = await self._get_record(conn, key)
            if record is None:
                if not create:
                    raise NotFoundError(f"session {key.session_id!r} not found")
                record = new_record(key, {}, now)
            elif not record.lease_free(now):
                raise SessionBusyError(
                    "another message on this session is still being answered; "
                    "retry when it has finished"
                )
            record = acquire_lease(record, holder, now, ttl_s)
            await self._put_record(conn, record)
            app_state, user_state = await self._scoped_state(conn, key)
        return LoadedSession(record, app_state, user_state, lease_token=holder)

    async def commit(self, key: SessionKey, write: TurnWrite) -> SessionRecord:
        async with self._transaction() as conn:
            record = await self._get_record(conn, key)
            if record is None:
                raise StaleTurnError("the session was deleted while the turn ran")
            reason = check_write(record, write, write.now)
            if reason:
                raise StaleTurnError(reason)
            updated, chunks = apply_write(record, write, self.policy)
            await self._put_record(conn, updated)
            for chunk in chunks:
                await self._put_chunk(conn, key, chunk)
            await self._apply_scoped_deltas(conn, key, write.app_delta, write.user_delta)
            for memory in write.memories:
                await self._put_memory(conn, memory)
            if write.profile_ops:
                await self._apply_profile_ops(conn, key.user_id, write.profile_ops)
            for job in write.jobs:
                row = codec.job_to_row(job)
                await conn.execute(
                    f"INSERT OR IGNORE INTO jobs ({', '.join(row)}) VALUES "
                    f"({', '.join('?' * len(row))})",
                    tuple(row.values()),
                )
        return updated

    async def renew_turn(
        self, key: SessionKey, *, holder: str, now: float, ttl_s: float, token: object | None
    ) -> object | None:
        # SQLite commits re-check inside their transaction, so the token is just the holder.
        async with self._transaction() as conn:
            record = await self._get_record(conn, key)
            renewed = None if record is None else renew_lease(record, holder, now, ttl_s)
            if renewed is None:
                return None
            await self._put_record(conn, renewed)
            return holder

    async def end_turn(self, key: SessionKey, *, holder: str) -> None:
        async with self._transaction() as conn:
            record = await self._get_record(conn, key)
            if record is not None and record.lease_holder == holder:
                await self._put_record(conn, release_lease(record, holder))

    async def _put_chunk(
        self, conn: aiosqlite.Connection, key: SessionKey, chunk: EventChunk
    ) -> None:
        await conn.execute(
            "INSERT INTO event_chunks (user_id, app, session_id, first_seq, last_seq, events)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (*key_args(key), chunk.first_seq, chunk.last_seq, codec.dumps(chunk.events)),
        )

    async def list_sessions(self, *, app: str, user_id: str | None) -> list[SessionRecord]:
        sql = "SELECT * FROM sessions WHERE app = ?"
        args: tuple[str, ...] = (app,)
        if user_id is not None:
            sql, args = sql + " AND user_id = ?", (app, user_id)
        async with self._use() as conn, conn.execute(sql + " ORDER BY updated_at", args) as cur:
            rows = await cur.fetchall()
        return [
            self._record(SessionKey(row["user_id"], row["app"], row["session_id"]), row)
            for row in rows
        ]

    async def read_events(self, key: SessionKey, *, after_seq: int | None, limit: int) -> EventPage:
        start = -1 if after_seq is None else after_seq
        async with self._use() as conn:
            record = await self._get_record(conn, key)
            if record is None:
                raise NotFoundError(f"session {key.session_id!r} not found")
            events = [e for e in record.tail if e["seq"] > start]
            first_tail_seq = record.tail[0]["seq"] if record.tail else record.next_seq
            if start + 1 < first_tail_seq:
                async with conn.execute(
                    f"SELECT events FROM event_chunks WHERE {KEY_WHERE} AND last_seq > ?"
                    " ORDER BY first_seq LIMIT ?",
                    (*key_args(key), start, limit),
                ) as cur:
                    older = [e for row in await cur.fetchall() for e in json.loads(row["events"])]
                events = [e for e in older if e["seq"] > start] + events
        page = events[:limit]
        more = len(events) > limit
        next_after = page[-1]["seq"] if more else None
        return EventPage(record=record, events=page, next_after_seq=next_after)

    async def delete_session(self, key: SessionKey) -> bool:
        async with self._transaction() as conn:
            cur = await conn.execute(f"DELETE FROM sessions WHERE {KEY_WHERE}", key_args(key))
            for table in _SESSION_TABLES:
                await conn.execute(f"DELETE FROM {table} WHERE {KEY_WHERE}", key_args(key))
            return cur.rowcount > 0

    async def user_state(self, *, app: str, user_id: str) -> dict[str, Any]:
        async with self._use() as conn:
            _, user_state = await self._scoped_state(conn, SessionKey(user_id, app, ""))
        return user_state

    async def _put_memory(self, conn: aiosqlite.Connection, record: MemoryRecord) -> None:
        row = codec.memory_to_row(record)
        row["embedding"] = None if record.embedding is None else codec.dumps(record.embedding)
        await conn.execute(
            f"INSERT OR REPLACE INTO memories ({', '.join(row)}) VALUES "
            f"({', '.join('?' * len(row))})",
            tuple(row.values()),
        )

    async def add_memories(self, records: list[MemoryRecord]) -> None:
        async with self._transaction() as conn:
            for record in records:
                await self._put_memory(conn, record)

    async def list_memories(
        self, user_id: str, *, app: str | None = None, limit: int = 20
    ) -> list[MemoryRecord]:
        sql, args = "SELECT * FROM memories WHERE user_id = ?", [user_id]
        if app is not None:
            sql += " AND app = ?"
            args.append(app)
        sql += " ORDER BY created_at DESC LIMIT ?"
        async with self._use() as conn, conn.execute(sql, (*args, limit)) as cur:
            rows = await cur.fetchall()
        return [codec.memory_from_row(dict(row)) for row in rows]

    async def delete_memory(self, user_id: str, memory_id: str) -> bool:
        async with self._transaction() as conn:
            cur = await conn.execute(
                "DELETE FROM memories WHERE user_id = ? AND id = ?", (user_id, memory_id)
            )
            return cur.rowcount > 0

    async def delete_user(self, user_id: str) -> int:
        removed = 0
        async with self._transaction() as conn:
            for table in _USER_TABLES:
                cur = await conn.execute(f"DELETE FROM {table} WHERE user_id = ?", (user_id,))
                removed += max(cur.rowcount, 0)
        return removed

    # -- ProfileStore (confidant/profiles/store.py) ----------------------------------------------

    async def _get_profile(self, conn: aiosqlite.Connection, user_id: str) -> dict[str, Any]:
        async with conn.execute(
            "SELECT profile FROM profiles WHERE user_id = ?", (user_id,)
        ) as cur:
            row = await cur.fetchone()
        return codec.loads_dict(row["profile"] if row else None)

    async def _put_profile(
        self, conn: aiosqlite.Connection, user_id: str, profile: dict[str, Any]
    ) -> None:
        await conn.execute(
            "INSERT OR REPLACE INTO profiles (user_id, profile) VALUES (?, ?)",
            (user_id, codec.dumps(profile)),
        )

    async def _apply_profile_ops(
        self, conn: aiosqlite.Connection, user_id: str, ops: list[ProfileOp]
    ) -> dict[str, Any]:
        # Inside BEGIN IMMEDIATE: the read-apply-write is serialised across processes.
        profile = apply_ops(await self._get_profile(conn, user_id), ops)
        await self._put_profile(conn, user_id, profile)
        return profile

    async def load_profile(self, user_id: str) -> dict[str, Any]:
        async with self._use() as conn:
            return await self._get_profile(conn, user_id)

    async def load_profile_version(self, user_id: str) -> ProfileVersion | None:
        return None  # commits apply ops inside their own write transaction

    async def update_profile(self, user_id: str, ops: list[ProfileOp]) -> dict[str, Any]:
        async with self._transaction() as conn:
            return await self._apply_profile_ops(conn, user_id, ops)

    async def replace_profile(
        self, user_id: str, profile: dict[str, Any], *, expected: dict[str, Any]
    ) -> bool:
        async with self._transaction() as conn:
            if await self._get_profile(conn, user_id) != expected:
                return False
            await self._put_profile(conn, user_id, profile)
            return True

    async def list_profile_users(self, *, after: str | None, limit: int) -> list[str]:
        async with (
            self._use() as conn,
            conn.execute(
                "SELECT user_id FROM profiles WHERE user_id > ? ORDER BY user_id LIMIT ?",
                (after or "", limit),
            ) as cur,
        ):
            return [row["user_id"] for row in await cur.fetchall()]
