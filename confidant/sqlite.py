"""Opening an embedded SQLite file the way every embedded store here uses it."""

from __future__ import annotations

import asyncio
import sqlite3
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
    (the base of the embedded stores beside the session database)."""

    schema = ""

    def __init__(self, path: str) -> None:
        self.path = path
        self._conn: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()
        # Reads take no `_lock`: concurrent first uses must still open one connection, not one
        # each (the others would be left open, unclosed by `close`).
        self._opening = asyncio.Lock()

    async def _connection(self) -> aiosqlite.Connection:
        if self._conn is None:
            async with self._opening:
                if self._conn is None:
                    conn = await open_sqlite(self.path, self.schema)
                    conn.row_factory = aiosqlite.Row  # rows by column name or by position
                    self._conn = conn
        return self._conn

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None
