"""Opening an embedded SQLite file the way every embedded store here uses it."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite

_WAL_ATTEMPTS = 20


def sibling_path(session_db: str, tag: str) -> str:
    """`.data/confidant.db` → `.data/confidant-{tag}.db` (":memory:" stays in memory): an
    embedded store in a file of its own (two connections opening one new file at once can
    lock each other out)."""
    if session_db == ":memory:":
        return session_db
    path = Path(session_db)
    return str(path.with_name(f"{path.stem}-{tag}{path.suffix or '.db'}"))


async def open_sqlite(path: str, schema: str) -> aiosqlite.Connection:
    """A connection in autocommit mode (stores issue their own BEGIN), WAL, with the schema.

    The busy timeout is set first, so a file another connection is creating is waited for.
    """
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = await aiosqlite.connect(path, isolation_level=None, timeout=30)
    await (await conn.execute("PRAGMA busy_timeout=30000")).close()
    # Switching a new file to WAL needs it to itself and does not wait on the busy timeout:
    # two stores opening one new file at once retry instead of failing ("database is locked").
    for attempt in range(_WAL_ATTEMPTS):
        try:
            await (await conn.execute("PRAGMA journal_mode=WAL")).close()
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == _WAL_ATTEMPTS - 1:
                raise
            await asyncio.sleep(0.01 * (attempt + 1))
    # The schema under the write lock from the start: a `CREATE … IF NOT EXISTS` that first
    # reads and then upgrades to a write while another connection writes is refused at once
    # (SQLITE_BUSY without waiting); BEGIN IMMEDIATE waits on the busy timeout instead.
    await conn.executescript(f"BEGIN IMMEDIATE;\n{schema}\nCOMMIT;")
    return conn


class SqliteFile:
    """One lazily opened connection to an embedded file and the lock that serialises its use
    (the base of the embedded stores beside the session database).

    Every use, reads included, holds the lock: requests share the one connection, so a read
    issued while another request's transaction is open would otherwise read its uncommitted
    rows (which a failed commit then takes back)."""

    schema = ""

    def __init__(self, path: str) -> None:
        self.path = path
        self._conn: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()

    async def _connection(self) -> aiosqlite.Connection:
        if self._conn is None:
            conn = await open_sqlite(self.path, self.schema)
            conn.row_factory = aiosqlite.Row  # rows by column name or by position
            await self._opened(conn)
            self._conn = conn
        return self._conn

    async def _opened(self, conn: aiosqlite.Connection) -> None:
        """What a store does to a connection it has just opened (e.g. add columns to old files)."""

    @asynccontextmanager
    async def _use(self) -> AsyncIterator[aiosqlite.Connection]:
        """The connection, to this caller alone until the block ends (one statement each is
        atomic on its own: autocommit)."""
        async with self._lock:
            yield await self._connection()

    async def _fetch_one(self, sql: str, args: tuple[object, ...] = ()) -> aiosqlite.Row | None:
        async with self._use() as conn, conn.execute(sql, args) as cur:
            return await cur.fetchone()

    async def _fetch_all(self, sql: str, args: tuple[object, ...] = ()) -> list[aiosqlite.Row]:
        async with self._use() as conn, conn.execute(sql, args) as cur:
            return list(await cur.fetchall())

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """The connection inside `BEGIN IMMEDIATE` (the write lock up front, so a
        read-check-write is atomic across processes), committed when the block ends."""
        async with self._use() as conn:
            await conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                await conn.execute("COMMIT")
            except BaseException:
                # A failed COMMIT too: a transaction left open would refuse every later BEGIN.
                if conn.in_transaction:
                    await conn.execute("ROLLBACK")
                raise

    async def close(self) -> None:
        async with self._lock:  # after the use under way, if any
            if self._conn is not None:
                await self._conn.close()
                self._conn = None
