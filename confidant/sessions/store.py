"""The session store port: what the session service needs from a database."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from confidant.ports import MemoryRecord
from confidant.profiles.store import ProfileStore
from confidant.sessions.records import (
    SessionKey,
    SessionRecord,
    StoredEvent,
    TailPolicy,
    TurnWrite,
)


class SessionExistsError(ValueError):
    """create_session with an id that is already taken."""


@dataclass(frozen=True)
class LoadedSession:
    """A session record with the app- and user-scoped state it merges with."""

    record: SessionRecord
    app_state: dict[str, Any]
    user_state: dict[str, Any]
    lease_token: object | None = None  # from begin_turn: the version the lease wrote


@dataclass(frozen=True)
class EventPage:
    record: SessionRecord  # the session document the page was read with
    events: list[StoredEvent]
    next_after_seq: int | None  # pass as `after_seq` for the next page; None at the end


class SessionStore(ProfileStore, Protocol):
    """One implementation per backend (SQLite embedded, Firestore in cloud).

    Every method that writes is atomic. `begin_turn` and `commit` are the turn's only writes.
    It is also the profile store, so a turn's profile writes commit with its events.
    """

    policy: TailPolicy

    async def create_session(
        self,
        key: SessionKey,
        *,
        state: dict[str, Any],
        app_delta: dict[str, Any],
        user_delta: dict[str, Any],
        now: float,
    ) -> LoadedSession: ...

    async def load(self, key: SessionKey) -> LoadedSession | None: ...

    async def begin_turn(
        self, key: SessionKey, *, holder: str, now: float, ttl_s: float, create: bool
    ) -> LoadedSession:
        """Take the session's lease (creating the session when `create`).

        Raises SessionBusyError when another live lease holds it, NotFoundError when it is
        missing and not `create`.
        """
        ...

    async def commit(self, key: SessionKey, write: TurnWrite) -> SessionRecord:
        """Apply the turn atomically, or raise StaleTurnError and change nothing."""
        ...

    async def renew_turn(
        self, key: SessionKey, *, holder: str, now: float, ttl_s: float, token: object | None
    ) -> object | None:
        """Extend `holder`'s lease; the new lease token, or None when the lease is lost."""
        ...

    async def end_turn(self, key: SessionKey, *, holder: str) -> None:
        """Release the lease without committing (the turn failed or was abandoned)."""
        ...

    async def list_sessions(self, *, app: str, user_id: str | None) -> list[SessionRecord]: ...

    async def read_events(
        self, key: SessionKey, *, after_seq: int | None, limit: int
    ) -> EventPage: ...

    async def delete_session(self, key: SessionKey) -> bool: ...

    async def user_state(self, *, app: str, user_id: str) -> dict[str, Any]: ...

    async def add_memories(self, records: list[MemoryRecord]) -> None: ...

    async def list_memories(
        self, user_id: str, *, app: str | None = None, limit: int = 20
    ) -> list[MemoryRecord]: ...

    async def delete_memory(self, user_id: str, memory_id: str) -> bool: ...

    async def delete_user(self, user_id: str) -> int:
        """Erase everything the user owns, the profile included; returns how many records went."""
        ...

    async def close(self) -> None: ...
