"""Vertex AI text embeddings behind the `Embedder` port, through google-genai.

The default model, `gemini-embedding-001`, is multilingual (zh and en score in one space) and
accepts a task type: queries are embedded as RETRIEVAL_QUERY and passages as
RETRIEVAL_DOCUMENT, which places a question near the passages that answer it rather than near
other questions. It is Matryoshka-trained, so `output_dimensionality` can cut its 3072
dimensions to 768 with little loss; cut vectors are not unit length, so they are normalised
here (the index uses the dot product).

Batching: on Vertex AI this model takes one text per request (documented limit; google-genai
routes it to `:predict`), so a batch becomes that many concurrent requests, bounded by
`concurrency`; other models take up to 250 texts a request, and the Gemini Developer API up to
100 (`:batchEmbedContents`). One client per process, built by the composition root.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from confidant.ports import EmbeddingTask

if TYPE_CHECKING:
    from google import genai

    from confidant.settings import Settings

DEFAULT_MODEL = "gemini-embedding-001"
DEFAULT_DIMENSIONS = 768
TASK_TYPES: dict[EmbeddingTask, str] = {
    "query": "RETRIEVAL_QUERY",
    "document": "RETRIEVAL_DOCUMENT",
}
_SINGLE_TEXT_MODELS = ("gemini-embedding-001",)
_VERTEX_MAX_BATCH = 250
_GEMINI_API_MAX_BATCH = 100


def default_batch_size(model: str, *, vertexai: bool) -> int:
    """The most texts one request may carry for `model` on this backend (documented limits)."""
    if not vertexai:
        return _GEMINI_API_MAX_BATCH
    if model in _SINGLE_TEXT_MODELS or "gemini" in model:
        return 1
    return _VERTEX_MAX_BATCH


def _unit(values: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values] if norm else list(values)


class VertexEmbedder:
    """`Embedder` on a google-genai client (Vertex AI, or the Gemini API with a key)."""

    def __init__(
        self,
        client: genai.Client,
        *,
        model: str = DEFAULT_MODEL,
        dimensions: int = DEFAULT_DIMENSIONS,
        batch_size: int | None = None,
        concurrency: int = 8,
    ) -> None:
        self._client = client
        self._model = model
        self._dimensions = dimensions
        self._batch_size = batch_size or default_batch_size(model, vertexai=client.vertexai)
        self._concurrency = max(1, concurrency)

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def model(self) -> str:
        return self._model

    @property
    def batch_size(self) -> int:
        """Texts per request (the ingestion paces requests, not texts)."""
        return self._batch_size

    async def embed(self, texts: Sequence[str], *, task: EmbeddingTask) -> list[list[float]]:
        if not texts:
            return []
        batches = [
            list(texts[start : start + self._batch_size])
            for start in range(0, len(texts), self._batch_size)
        ]
        limit = asyncio.Semaphore(self._concurrency)

        async def run(batch: list[str]) -> list[list[float]]:
            async with limit:
                return await self._embed_batch(batch, task)

        results = await asyncio.gather(*(run(batch) for batch in batches))
        return [vector for batch in results for vector in batch]

    async def _embed_batch(self, texts: list[str], task: EmbeddingTask) -> list[list[float]]:
        from google.genai import types

        response = await self._client.aio.models.embed_content(
            model=self._model,
            contents=texts,  # type: ignore[arg-type]
            config=types.EmbedContentConfig(
                task_type=TASK_TYPES[task], output_dimensionality=self._dimensions
            ),
        )
        embeddings = response.embeddings or []
        if len(embeddings) != len(texts):
            raise ValueError(
                f"{self._model} returned {len(embeddings)} embeddings for {len(texts)} texts"
            )
        vectors = [_unit(embedding.values or []) for embedding in embeddings]
        if any(len(vector) != self._dimensions for vector in vectors):
            raise ValueError(f"{self._model} returned vectors of the wrong size")
        return vectors


def build_vertex_embedder(
    settings: Settings, *, attempts: int = 1, timeout_s: float | None = None
) -> VertexEmbedder:
    """The process's embedder on its own google-genai client. On the request path: a short
    timeout and one attempt (a slow embedding must not hold the turn); the ingestion asks for
    a longer timeout and retries."""
    from confidant.models.factory import build_genai_client

    client = build_genai_client(
        settings, timeout_s=timeout_s or settings.embedding_timeout_s, attempts=attempts
    )
    return VertexEmbedder(
        client,
        model=settings.embedding_model,
        dimensions=settings.embedding_dimensions,
        batch_size=settings.embedding_batch_size,
    )
