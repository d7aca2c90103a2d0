"""A base for components that keep their own tables in the embedded SQLite file."""

from __future__ import annotations

import asyncio

import aiosqlite

from confidant.sqlite import open_sqlite


class EmbeddedTables:
    """One connection per component, opened on first use with the component's `SCHEMA`."""

    SCHEMA = ""

    def __init__(self, path: str) -> None:
        self.path = path
        self._conn: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()  # one writer at a time on this connection

    async def _connection(self) -> aiosqlite.Connection:
        if self._conn is None:
            conn = await open_sqlite(self.path, self.SCHEMA)
            conn.row_factory = aiosqlite.Row
            self._conn = conn
        return self._conn

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None
