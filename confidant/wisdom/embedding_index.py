"""An exact nearest-neighbour index over any `Embedder`, in memory.

It is how `bench/wisdom_eval.py` measures an embedding (the offline hashed one, or Vertex AI's
when credentials are present) on the same chunks and with the same rules as the other
indexes, without a deployed Vector Search index.
"""

from __future__ import annotations

from collections.abc import Sequence

from confidant.ports import Embedder, WisdomPassage
from confidant.wisdom.chunking import Chunk, best_chunk_per_passage
from confidant.wisdom.local_index import base_locale, to_passage


class EmbeddingWisdomIndex:
    """Cosine similarity between unit vectors, brute force; restricted to the locale."""

    def __init__(self, embedder: Embedder, chunks: Sequence[Chunk]) -> None:
        self._embedder = embedder
        self._chunks = tuple(chunks)
        self._vectors: list[list[float]] | None = None

    async def _document_vectors(self) -> list[list[float]]:
        if self._vectors is None:
            texts = [chunk.embedding_text for chunk in self._chunks]
            self._vectors = await self._embedder.embed(texts, task="document")
        return self._vectors

    async def search(
        self, query: str, *, top_k: int = 3, locale: str | None = None, topic: str | None = None
    ) -> list[WisdomPassage]:
        if top_k <= 0 or not query.strip():
            return []
        documents = await self._document_vectors()
        (query_vector,) = await self._embedder.embed([query], task="query")
        wanted = base_locale(locale)
        ranked = sorted(
            (
                (sum(q * d for q, d in zip(query_vector, vector, strict=True)), chunk)
                for vector, chunk in zip(documents, self._chunks, strict=True)
                if wanted in (None, chunk.locale) and topic in (None, "", chunk.topic)
            ),
            key=lambda pair: (-pair[0], pair[1].id),
        )
        return [to_passage(chunk, score) for score, chunk in best_chunk_per_passage(ranked)][:top_k]
