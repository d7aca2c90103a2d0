"""The stream log on Firestore, under the session it belongs to:

    users/{uid}/apps/{app}/sessions/{sid}/streams/{turn_id}                     the head
    users/{uid}/apps/{app}/sessions/{sid}/streams/{turn_id}/stream_parts/{first}  a batch

Every document carries `expire_at`, the TTL field Terraform's policies name (firestore.tf), so
Firestore deletes a turn's records after the retention; readers check the head's `expire_at`
themselves, since TTL deletion may lag by a day. Each flush creates one new batch document (no
document is rewritten while a turn streams, so the one-write-per-second guidance of a single
document never binds); the head is written at the start and at the end. Deleting the session or
the user deletes these with it (recursive deletes).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from google.cloud import firestore

from confidant.ports import StreamHead
from confidant.sessions.firestore_store import session_ref
from confidant.sessions.records import SessionKey

STREAMS = "streams"
STREAM_PARTS = "stream_parts"


def _batch_id(first: int) -> str:
    return f"{first:08d}"  # zero-padded: document order is part order


class FirestoreStreamLog:
    def __init__(self, client: firestore.AsyncClient) -> None:
        self.client = client

    async def save(
        self,
        key: SessionKey,
        head: StreamHead,
        first: int,
        parts: Sequence[str],
        *,
        write_head: bool,
    ) -> None:
        ref = session_ref(self.client, key).collection(STREAMS).document(head.turn_id)
        expire_at = datetime.fromtimestamp(head.expire_at, UTC)
        batch = self.client.batch()
        if write_head:
            batch.set(ref, head.model_dump(exclude={"expire_at"}) | {"expire_at": expire_at})
        if parts:
            batch.create(
                ref.collection(STREAM_PARTS).document(_batch_id(first)),
                {"first": first, "parts": "\n".join(parts), "expire_at": expire_at},
            )
        await batch.commit()

    async def latest(self, key: SessionKey) -> StreamHead | None:
        query = (
            session_ref(self.client, key)
            .collection(STREAMS)
            .order_by("started_at", direction=firestore.Query.DESCENDING)
            .limit(1)
        )
        for snapshot in await query.get():
            doc = snapshot.to_dict() or {}
            return StreamHead.model_validate(doc | {"expire_at": doc["expire_at"].timestamp()})
        return None

    async def parts(self, key: SessionKey, turn_id: str, *, first: int) -> list[str]:
        query = (
            session_ref(self.client, key)
            .collection(STREAMS)
            .document(turn_id)
            .collection(STREAM_PARTS)
            .where(filter=firestore.FieldFilter("first", ">=", first))
            .order_by("first")
        )
        return [part for batch in await query.get() for part in batch.get("parts").split("\n")]
