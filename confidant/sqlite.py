"""Opening an embedded SQLite file the way every embedded store here uses it."""

from __future__ import annotations

from pathlib import Path

import aiosqlite


async def open_sqlite(path: str, schema: str) -> aiosqlite.Connection:
    """A connection in autocommit mode (stores issue their own BEGIN), WAL, with the schema.

    The busy timeout is set first, so a file another connection is creating is waited for.
    """
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = await aiosqlite.connect(path, isolation_level=None, timeout=30)
    await conn.execute("PRAGMA busy_timeout=30000")
    await conn.execute("PRAGMA journal_mode=WAL")
    await conn.executescript(schema)
    return conn
