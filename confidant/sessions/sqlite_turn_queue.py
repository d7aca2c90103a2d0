"""The turn queue (confidant/sessions/turn_queue.py) in the embedded SQLite file."""

from __future__ import annotations

from confidant.sessions.records import SessionKey
from confidant.sessions.sqlite_store import KEY_WHERE, SqliteSessionStore, key_args


class SqliteTurnQueue:
    """On the embedded store's file and connection (tables in its schema)."""

    def __init__(self, store: SqliteSessionStore) -> None:
        self._store = store

    async def join(self, key: SessionKey, ticket: str, *, now: float, ttl_s: float) -> None:
        # OR REPLACE: a ticket that expired while its process stalled joins again, at the end
        # (the replaced row gets a new arrival number).
        async with self._store.transaction() as conn:
            await conn.execute(
                "INSERT OR REPLACE INTO turn_queue (user_id, app, session_id, ticket, expires)"
                " VALUES (?, ?, ?, ?, ?)",
                (*key_args(key), ticket, now + ttl_s),
            )

    async def line(self, key: SessionKey, *, now: float) -> list[str]:
        async with (
            self._store.read() as conn,
            conn.execute(
                f"SELECT ticket FROM turn_queue WHERE {KEY_WHERE} AND expires > ? ORDER BY arrival",
                (*key_args(key), now),
            ) as cur,
        ):
            return [row["ticket"] for row in await cur.fetchall()]

    async def refresh(self, key: SessionKey, ticket: str, *, now: float, ttl_s: float) -> None:
        async with self._store.transaction() as conn:
            await conn.execute(
                "UPDATE turn_queue SET expires = ? WHERE ticket = ?", (now + ttl_s, ticket)
            )

    async def leave(self, key: SessionKey, ticket: str) -> None:
        async with self._store.transaction() as conn:
            await conn.execute("DELETE FROM turn_queue WHERE ticket = ?", (ticket,))

    async def request_interrupt(self, key: SessionKey, holder: str) -> None:
        async with self._store.transaction() as conn:
            await conn.execute(
                "INSERT OR REPLACE INTO turn_interrupts (user_id, app, session_id, holder)"
                " VALUES (?, ?, ?, ?)",
                (*key_args(key), holder),
            )

    async def interrupt_requested(self, key: SessionKey) -> str | None:
        async with (
            self._store.read() as conn,
            conn.execute(
                f"SELECT holder FROM turn_interrupts WHERE {KEY_WHERE}", key_args(key)
            ) as cur,
        ):
            row = await cur.fetchone()
        return None if row is None else str(row["holder"])

    async def clear_interrupt(self, key: SessionKey) -> None:
        async with self._store.transaction() as conn:
            await conn.execute(f"DELETE FROM turn_interrupts WHERE {KEY_WHERE}", key_args(key))
