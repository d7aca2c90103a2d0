"""ADK's memory-service contract over our store: writes made during a turn commit with it."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions import Session
from google.genai import types

from confidant.ports import MemoryRecord
from confidant.sessions.service import current_turn
from confidant.sessions.store import SessionStore

_WORD = re.compile(r"[\u3400-\u9fff]|\w+")


def _tokens(text: str) -> set[str]:
    return {t.lower() for t in _WORD.findall(text)}


def _entry_text(entry: MemoryEntry) -> str:
    return "".join(p.text or "" for p in (entry.content.parts or []))


def to_record(app: str, user_id: str, entry: MemoryEntry) -> MemoryRecord:
    data = dict(entry.custom_metadata)
    session_id = data.get("session_id")
    return MemoryRecord(
        id=entry.id or uuid.uuid4().hex,
        user_id=user_id,
        app=app,
        kind=str(data.get("kind", "note")),
        text=_entry_text(entry),
        data=data,
        session_id=str(session_id) if session_id else None,
        created_at=datetime.now(UTC),
    )


def to_entry(record: MemoryRecord) -> MemoryEntry:
    return MemoryEntry(
        id=record.id,
        content=types.Content(role="user", parts=[types.Part(text=record.text)]),
        custom_metadata={**record.data, "kind": record.kind},
        timestamp=record.created_at.isoformat(),
    )


class TurnMemoryService(BaseMemoryService):
    """Long-term memory in the user's subtree. Inside a turn, `add_memory` is buffered and
    written in the turn's commit, so a memory never outlives a turn that failed."""

    def __init__(self, store: SessionStore, *, search_limit: int = 50) -> None:
        self._store = store
        self._search_limit = search_limit

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        records = [to_record(app_name, user_id, entry) for entry in memories]
        turn = current_turn()
        if turn is not None and (turn.key.app, turn.key.user_id) == (app_name, user_id):
            turn.memories.extend(records)
        else:
            await self._store.add_memories(records)

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        records = await self._store.list_memories(user_id, app=app_name, limit=self._search_limit)
        wanted = _tokens(query)
        scored = [
            (len(wanted & _tokens(r.text + " " + r.data.get("name", ""))), r) for r in records
        ]
        hits = [r for score, r in sorted(scored, key=lambda s: -s[0]) if score > 0 or not wanted]
        return SearchMemoryResponse(memories=[to_entry(r) for r in hits[:10]])

    async def add_session_to_memory(self, session: Session) -> None:
        raise NotImplementedError(
            "whole sessions are not ingested; memories are written explicitly (add_memory)"
        )

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        if memory_id is not None:
            await self._store.delete_memory(user_id, memory_id)
