"""The line of messages waiting for a busy session, and the request to interrupt its turn.

Double texting (`enqueue`, `interrupt`; confidant/chat/busy.py) must work when the running turn
and the waiting requests are on different instances, so both live in the store, beside (never
on) the session document: writing the session document would change its update time, which is
the running turn's lease token, and so cost it its commit.

- A waiting request holds a *ticket*. Tickets are kept in arrival order (the store orders them:
  SQLite by an autoincrement key inside its write lock, Firestore by the server's commit
  timestamp), and each expires unless its holder refreshes it, so a request whose process died
  never blocks the line.
- An *interrupt request* names the lease holder whose turn should stop; that turn's watcher
  polls for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from confidant.sessions.records import SessionKey

if TYPE_CHECKING:
    from confidant.sessions.sqlite_store import SqliteSessionStore


class TurnQueue(Protocol):
    async def join(self, key: SessionKey, ticket: str, *, now: float, ttl_s: float) -> None:
        """Put `ticket` at the end of the session's line."""
        ...

    async def line(self, key: SessionKey, *, now: float) -> list[str]:
        """The live tickets, first come first."""
        ...

    async def refresh(self, key: SessionKey, ticket: str, *, now: float, ttl_s: float) -> None:
        """Keep `ticket` alive for another `ttl_s`."""
        ...

    async def leave(self, key: SessionKey, ticket: str) -> None: ...

    async def request_interrupt(self, key: SessionKey, holder: str) -> None:
        """Ask the turn holding the lease as `holder` to stop."""
        ...

    async def interrupt_requested(self, key: SessionKey) -> str | None:
        """The lease holder whose turn was asked to stop, if any."""
        ...

    async def clear_interrupt(self, key: SessionKey) -> None: ...


_KEY_WHERE = "user_id = ? AND app = ? AND session_id = ?"


def _key_args(key: SessionKey) -> tuple[str, str, str]:
    return (key.user_id, key.app, key.session_id)


class SqliteTurnQueue:
    """On the embedded store's file and connection (tables in its schema); the Firestore
    adapter is confidant/sessions/firestore_turn_queue.py."""

    def __init__(self, store: SqliteSessionStore) -> None:
        self._store = store

    async def join(self, key: SessionKey, ticket: str, *, now: float, ttl_s: float) -> None:
        async with self._store.transaction() as conn:
            await conn.execute(
                "INSERT INTO turn_queue (user_id, app, session_id, ticket, expires)"
                " VALUES (?, ?, ?, ?, ?)",
                (*_key_args(key), ticket, now + ttl_s),
            )

    async def line(self, key: SessionKey, *, now: float) -> list[str]:
        async with (
            self._store.read() as conn,
            conn.execute(
                f"SELECT ticket FROM turn_queue WHERE {_KEY_WHERE} AND expires > ?"
                " ORDER BY arrival",
                (*_key_args(key), now),
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
                (*_key_args(key), holder),
            )

    async def interrupt_requested(self, key: SessionKey) -> str | None:
        async with (
            self._store.read() as conn,
            conn.execute(
                f"SELECT holder FROM turn_interrupts WHERE {_KEY_WHERE}", _key_args(key)
            ) as cur,
        ):
            row = await cur.fetchone()
        return None if row is None else str(row["holder"])

    async def clear_interrupt(self, key: SessionKey) -> None:
        async with self._store.transaction() as conn:
            await conn.execute(f"DELETE FROM turn_interrupts WHERE {_KEY_WHERE}", _key_args(key))
