"""Memory hits make a turn better, never possible: a failing embedder leaves them out."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from confidant.chat.context import ContextRequest, MemoryHitsSource
from confidant.embeddings import HashedEmbedder
from confidant.jobs.sqlite_store import SqliteJobStore
from confidant.ports import EmbeddingTask, MemoryRecord
from confidant.sessions.sqlite_store import SqliteSessionStore

REQUEST = ContextRequest(
    user_id="u", app="onemind", session_id="s", message="my sister never calls", locale="en"
)


class _DownEmbedder:
    dimensions = 512

    async def embed(self, texts: Sequence[str], *, task: EmbeddingTask) -> list[list[float]]:
        raise ConnectionError("embedding service unavailable")


async def test_hits_are_ranked_by_similarity_and_a_failing_embedder_yields_none(tmp_path) -> None:
    sessions = SqliteSessionStore(str(tmp_path / "m.db"))
    embedder = HashedEmbedder()
    texts = ["My sister rarely calls me back", "I run every morning before work"]
    vectors = await embedder.embed(texts, task="document")
    await sessions.add_memories(
        [
            MemoryRecord(
                id=f"m{i}",
                user_id="u",
                app="onemind",
                kind="fact",
                text=text,
                embedding=vector,
                created_at=datetime.now(UTC),
            )
            for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
        ]
    )
    store = SqliteJobStore(sessions)
    hits = await MemoryHitsSource(store, embedder).load(REQUEST)
    assert hits and hits[0].text == "My sister rarely calls me back"
    assert await MemoryHitsSource(store, _DownEmbedder()).load(REQUEST) == []
    await sessions.close()
