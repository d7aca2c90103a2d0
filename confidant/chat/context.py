"""Context sources: what an app loads for a turn, in parallel with the session lease.

An app names the sources it needs in `AppSpec.context`; the composition root maps each name
to a `ContextSource` built on the configured adapters. The chat service loads all of them
concurrently with the lease, so a turn pays about one storage round trip for its context,
and an app pays only for what it declared.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from confidant.errors import ConfidantError
from confidant.jobs.store import JobStore
from confidant.ports import Embedder
from confidant.sessions.store import SessionStore

logger = logging.getLogger(__name__)

MEMORIES = "memories"
SUMMARY = "summary"
EMOTIONS = "emotions"
MEMORY_HITS = "memory_hits"
RECENT_MEMORIES_PER_TURN = 5
EMOTION_TRAJECTORY = 5
MEMORY_HITS_PER_TURN = 5


@dataclass(frozen=True)
class ContextRequest:
    """What a source may key its load on."""

    user_id: str
    app: str
    session_id: str
    message: str
    locale: str
    options: Mapping[str, Any] = field(default_factory=dict)


class ContextSource(Protocol):
    async def load(self, request: ContextRequest) -> Any: ...


class MissingContextSourceError(ConfidantError):
    """An app declared a context source the deployment does not provide (a wiring bug)."""


class RecentMemoriesSource:
    """The user's most recent long-term memories (newest first)."""

    def __init__(self, store: SessionStore, limit: int = RECENT_MEMORIES_PER_TURN) -> None:
        self._store = store
        self._limit = limit

    async def load(self, request: ContextRequest) -> Any:
        return await self._store.list_memories(request.user_id, limit=self._limit)


class SummarySource:
    """The session's rolling summary, `{"text", "covers_seq"}` or None (one document read)."""

    def __init__(self, store: JobStore) -> None:
        self._store = store

    async def load(self, request: ContextRequest) -> Any:
        return await self._store.summary(request.user_id, request.app, request.session_id)


class EmotionsSource:
    """The user's last emotion snapshots in this app, oldest first (one query)."""

    def __init__(self, store: JobStore, limit: int = EMOTION_TRAJECTORY) -> None:
        self._store = store
        self._limit = limit

    async def load(self, request: ContextRequest) -> Any:
        return await self._store.emotions(
            request.user_id, app=request.app, session_id=None, limit=self._limit
        )


MEMORY_EMBED_TIMEOUT_S = 3.0  # on the request path, before the first byte


class MemoryHitsSource:
    """The user's memories nearest to the turn's message (every app's, crystals included)."""

    def __init__(
        self, store: JobStore, embedder: Embedder, limit: int = MEMORY_HITS_PER_TURN
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._limit = limit

    async def load(self, request: ContextRequest) -> Any:
        # Memory makes a turn better, never possible: an embedding service that is slow, rate
        # limited or down leaves the turn without memory hits instead of failing it.
        try:
            [vector] = await asyncio.wait_for(
                self._embedder.embed([request.message], task="query"), MEMORY_EMBED_TIMEOUT_S
            )
        except Exception as exc:
            logger.warning("memory search skipped: the query embedding failed (%s)", type(exc))
            return []
        return await self._store.search_memories(
            request.user_id, vector, app=None, limit=self._limit
        )


async def load_context(
    sources: Mapping[str, ContextSource], names: Sequence[str], request: ContextRequest
) -> dict[str, Any]:
    """Load the named sources concurrently; the first failure is raised."""
    missing = [name for name in names if name not in sources]
    if missing:
        raise MissingContextSourceError(f"no context source named {', '.join(missing)}")
    values = await asyncio.gather(*(sources[name].load(request) for name in names))
    return dict(zip(names, values, strict=True))
