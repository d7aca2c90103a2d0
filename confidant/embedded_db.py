"""One connection per embedded SQLite file and component, opened on first use."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiosqlite


async def open_embedded(path: str, schema: str) -> aiosqlite.Connection:
    """A connection in autocommit mode with `schema` applied (idempotent DDL) and named rows."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = await aiosqlite.connect(path, isolation_level=None, timeout=30)
    conn.row_factory = aiosqlite.Row
    # As the session store does on the same file: WAL, and wait for other writers' locks.
    await conn.execute("PRAGMA journal_mode=WAL")
    await conn.execute("PRAGMA busy_timeout=30000")
    await conn.executescript(schema)
    return conn


class EmbeddedTables:
    """Base of a component keeping its own tables in the embedded file (schema `SCHEMA`)."""

    SCHEMA = ""

    def __init__(self, path: str) -> None:
        self.path = path
        self._conn: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()  # one writer at a time on this connection

    async def _connection(self) -> aiosqlite.Connection:
        if self._conn is None:
            self._conn = await open_embedded(self.path, self.SCHEMA)
        return self._conn

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None
