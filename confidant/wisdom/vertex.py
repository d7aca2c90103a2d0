"""WisdomIndex on Vertex AI: query embedding (Embedder port) → Vector Search findNeighbors.

Datapoints are chunks (confidant/wisdom/chunking.py), written by `confidant-ingest`:
restricts `locale` and `topic`, crowding attribute = the passage the chunk came from (its
source), and the chunk's text and passage fields as embedding metadata, so a hit comes back
complete. A query restricts on the conversation's locale (and a topic when given) and allows
`per_source_limit` chunks per passage. The whole search is bounded by `timeout_s`: a slow,
rate-limited or failing backend raises, and the coach's tool goes on without wisdom.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from confidant.ports import Embedder, WisdomPassage
from confidant.wisdom.chunking import Chunk
from confidant.wisdom.local_index import base_locale
from confidant.wisdom.vector_search import (
    Datapoint,
    Neighbor,
    Restrict,
    VectorSearchClient,
    endpoint_url,
)

if TYPE_CHECKING:
    from confidant.settings import Settings

LOCALE_NAMESPACE = "locale"
TOPIC_NAMESPACE = "topic"


def datapoint_for(chunk: Chunk, vector: Sequence[float]) -> Datapoint:
    restricts = [Restrict(LOCALE_NAMESPACE, (chunk.locale,))]
    if chunk.topic:
        restricts.append(Restrict(TOPIC_NAMESPACE, (chunk.topic,)))
    return Datapoint(
        datapoint_id=chunk.id,
        vector=vector,
        restricts=restricts,
        crowding_attribute=chunk.passage_id,
        metadata=chunk.metadata(),
    )


def _passage(neighbor: Neighbor) -> WisdomPassage | None:
    metadata = neighbor.metadata
    text = metadata.get("text")
    if not isinstance(text, str) or not text:
        return None  # a datapoint without its text is useless to the coach (and never quoted)
    return WisdomPassage(
        id=str(metadata.get("passage_id") or neighbor.datapoint_id),
        title=str(metadata.get("title") or ""),
        text=text,
        source=str(metadata.get("source") or ""),
        locale=str(metadata.get("locale") or "en"),
        score=neighbor.distance,
    )


class VertexWisdomIndex:
    """The cloud `WisdomIndex`; one per process (its clients are shared)."""

    def __init__(
        self,
        embedder: Embedder,
        client: VectorSearchClient,
        *,
        endpoint_url: str,
        index_endpoint: str,
        deployed_index_id: str,
        per_source_limit: int = 1,
        timeout_s: float = 5.0,
    ) -> None:
        self._embedder = embedder
        self._client = client
        self._endpoint_url = endpoint_url.rstrip("/")
        self._index_endpoint = index_endpoint
        self._deployed_index_id = deployed_index_id
        self._per_source_limit = per_source_limit
        self._timeout_s = timeout_s

    def __deepcopy__(self, memo: dict[int, object]) -> VertexWisdomIndex:
        # A process-wide service holding network clients: a deep copy of a request or a tool
        # that refers to it refers to the same instance.
        return self

    async def search(
        self, query: str, *, top_k: int = 3, locale: str | None = None, topic: str | None = None
    ) -> list[WisdomPassage]:
        if top_k <= 0 or not query.strip():
            return []
        restricts = []
        if wanted := base_locale(locale):
            restricts.append(Restrict(LOCALE_NAMESPACE, (wanted,)))
        if topic:
            restricts.append(Restrict(TOPIC_NAMESPACE, (topic,)))
        async with asyncio.timeout(self._timeout_s):
            (vector,) = await self._embedder.embed([query], task="query")
            neighbors = await self._client.find_neighbors(
                endpoint_url=self._endpoint_url,
                index_endpoint=self._index_endpoint,
                deployed_index_id=self._deployed_index_id,
                vector=vector,
                neighbor_count=top_k,
                restricts=restricts,
                per_crowding_attribute_neighbor_count=self._per_source_limit,
            )
        passages = [passage for passage in map(_passage, neighbors) if passage is not None]
        return sorted(passages, key=lambda p: -p.score)[:top_k]


def build_vertex_wisdom(settings: Settings, embedder: Embedder) -> VertexWisdomIndex:
    assert settings.vector_search_endpoint_domain  # checked by Settings
    assert settings.vector_search_index_endpoint and settings.vector_search_deployed_index_id
    return VertexWisdomIndex(
        embedder,
        VectorSearchClient(timeout_s=settings.wisdom_timeout_s),
        endpoint_url=endpoint_url(settings.vector_search_endpoint_domain),
        index_endpoint=settings.vector_search_index_endpoint,
        deployed_index_id=settings.vector_search_deployed_index_id,
        per_source_limit=settings.wisdom_per_source_limit,
        timeout_s=settings.wisdom_timeout_s,
    )
