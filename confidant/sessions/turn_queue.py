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

The adapters: confidant/sessions/sqlite_turn_queue.py and firestore_turn_queue.py.
"""

from __future__ import annotations

from typing import Protocol

from confidant.sessions.records import SessionKey


class TurnQueue(Protocol):
    async def join(self, key: SessionKey, ticket: str, *, now: float, ttl_s: float) -> None:
        """Put `ticket` at the end of the session's line (again, if it had expired)."""
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
