"""What a cloud index holds: one Firestore document per datapoint, written by the ingestion.

Vector Search cannot list an index's datapoints, yet removing passages that left the corpus
needs exactly that list. The ingestion records each datapoint it upserts (and forgets each
one it removes) under `wisdom_manifests/{index}/datapoints/{datapoint id}`, in batches after
each successful call, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from confidant.wisdom.chunking import Chunk

if TYPE_CHECKING:
    from google.cloud.firestore import AsyncClient

MANIFESTS = "wisdom_manifests"
DATAPOINTS = "datapoints"
_BATCH = 400  # Firestore allows 500 writes per batch


class FirestoreManifest:
    def __init__(self, client: AsyncClient, index: str) -> None:
        self._client = client
        # Index names hold slashes; the document id is a digest, the name is kept in the doc.
        self._index = index
        self._root = client.collection(MANIFESTS).document(
            hashlib.sha256(index.encode()).hexdigest()[:32]
        )

    async def ids(self) -> set[str]:
        return {doc.id async for doc in self._root.collection(DATAPOINTS).select([]).stream()}

    async def add(self, chunks: Sequence[Chunk]) -> None:
        now = datetime.now(UTC)
        for start in range(0, len(chunks), _BATCH):
            batch = self._client.batch()
            batch.set(self._root, {"index": self._index, "updated_at": now})
            for chunk in chunks[start : start + _BATCH]:
                batch.set(
                    self._root.collection(DATAPOINTS).document(chunk.id),
                    {"passage_id": chunk.passage_id, "locale": chunk.locale, "ingested_at": now},
                )
            await batch.commit()

    async def remove(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), _BATCH):
            batch = self._client.batch()
            for datapoint_id in ids[start : start + _BATCH]:
                batch.delete(self._root.collection(DATAPOINTS).document(datapoint_id))
            await batch.commit()
