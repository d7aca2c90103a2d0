"""An embedded store used by several requests at once before its first connection exists still
opens one connection, so `close` leaves none open behind it."""

from __future__ import annotations

import asyncio

import aiosqlite
import pytest

import confidant.sqlite
from confidant.effects.sqlite_ledger import SqliteEffectLedger


async def test_concurrent_first_uses_open_one_connection_that_close_closes(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[aiosqlite.Connection] = []
    open_sqlite = confidant.sqlite.open_sqlite

    async def recording(path: str, schema: str) -> aiosqlite.Connection:
        conn = await open_sqlite(path, schema)
        opened.append(conn)
        return conn

    monkeypatch.setattr(confidant.sqlite, "open_sqlite", recording)
    ledger = SqliteEffectLedger(str(tmp_path / "effects.db"))
    # Reads (`get`) and a write (`begin`) arrive together on a fresh store.
    await asyncio.gather(
        ledger.get("u", "a"), ledger.get("u", "b"), ledger.begin("u", "c", now=1.0)
    )
    await ledger.close()

    assert len(opened) == 1
    for conn in opened:
        with pytest.raises(ValueError):  # aiosqlite: "no active connection"
            await conn.execute("SELECT 1")
