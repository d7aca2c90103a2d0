"""ADK's memory-service contract over our store: writes made during a turn commit with it.

Every memory is stored with its embedding (document task), and `search_memory` ranks the
user's memories by cosine similarity to the query (query task): Firestore vector search in the
cloud (`find_nearest`, which the emulator supports too), a bounded scan in the embedded store.
Any app can use it through ADK's `load_memory` / `preload_memory` tools.
"""

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

from confidant.jobs.store import JobStore
from confidant.ports import Embedder, MemoryRecord
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
    written in the turn's commit, so a memory never outlives a turn that failed.

    Args:
        store: Where memories are written.
        embedder / search: With both, memories are embedded and searched by similarity;
            without, search falls back to shared words over the most recent memories.
        across_apps: Search all of the user's memories (True) or only the asking app's.
    """

    def __init__(
        self,
        store: SessionStore,
        *,
        embedder: Embedder | None = None,
        search: JobStore | None = None,
        across_apps: bool = True,
        search_limit: int = 50,
        hits: int = 10,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._search = search
        self._across_apps = across_apps
        self._search_limit = search_limit
        self._hits = hits

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        records = [to_record(app_name, user_id, entry) for entry in memories]
        if self._embedder is not None and records:
            vectors = await self._embedder.embed([r.text for r in records], task="document")
            records = [
                r.model_copy(update={"embedding": v}) for r, v in zip(records, vectors, strict=True)
            ]
        turn = current_turn()
        if turn is not None and (turn.key.app, turn.key.user_id) == (app_name, user_id):
            turn.memories.extend(records)
        else:
            await self._store.add_memories(records)

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        app = None if self._across_apps else app_name
        if self._embedder is not None and self._search is not None and query.strip():
            [vector] = await self._embedder.embed([query], task="query")
            hits = await self._search.search_memories(user_id, vector, app=app, limit=self._hits)
            return SearchMemoryResponse(memories=[to_entry(r) for r in hits])
        records = await self._store.list_memories(user_id, app=app, limit=self._search_limit)
        wanted = _tokens(query)
        scored = [
            (len(wanted & _tokens(r.text + " " + r.data.get("name", ""))), r) for r in records
        ]
        hits = [r for score, r in sorted(scored, key=lambda s: -s[0]) if score > 0 or not wanted]
        return SearchMemoryResponse(memories=[to_entry(r) for r in hits[: self._hits]])

    async def add_session_to_memory(self, session: Session) -> None:
        raise NotImplementedError(
            "whole sessions are not ingested; memories are written explicitly (add_memory)"
        )

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        if memory_id is not None:
            await self._store.delete_memory(user_id, memory_id)
