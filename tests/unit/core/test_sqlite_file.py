"""An embedded store used by several requests at once before its first connection exists still
opens one connection, so `close` leaves none open behind it."""

from __future__ import annotations

import asyncio
import sqlite3

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


async def test_a_read_during_a_write_that_fails_never_sees_the_write(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request shares the store's one connection: a read issued while another request's
    transaction is open must wait for it, not read its uncommitted rows (which a failed commit
    then takes back)."""
    commit_reached = asyncio.Event()
    release_commit = asyncio.Event()
    open_sqlite = confidant.sqlite.open_sqlite

    async def with_failing_commit(path: str, schema: str) -> aiosqlite.Connection:
        conn = await open_sqlite(path, schema)
        execute = conn.execute

        async def failing_commit() -> None:  # a slow disk that then fails the commit
            commit_reached.set()
            await release_commit.wait()
            raise sqlite3.OperationalError("disk I/O error")

        def gated(sql: str, parameters: object = None) -> object:
            # Not a coroutine itself: aiosqlite's `execute` is also used with `async with`.
            return failing_commit() if sql == "COMMIT" else execute(sql, parameters)

        conn.execute = gated  # type: ignore[method-assign]
        return conn

    monkeypatch.setattr(confidant.sqlite, "open_sqlite", with_failing_commit)
    ledger = SqliteEffectLedger(str(tmp_path / "effects.db"))
    writing = asyncio.create_task(ledger.begin("u", "write-task", now=1.0))
    await asyncio.wait_for(commit_reached.wait(), timeout=10)
    reading = asyncio.create_task(ledger.get("u", "write-task"))
    await asyncio.wait({reading}, timeout=0.5)  # an unguarded read answers within this
    release_commit.set()

    with pytest.raises(sqlite3.OperationalError):
        await writing
    assert await reading is None
    assert await ledger.get("u", "write-task") is None
    await ledger.close()
