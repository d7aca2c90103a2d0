"""One connection per embedded SQLite file and component, opened on first use."""

from __future__ import annotations

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
