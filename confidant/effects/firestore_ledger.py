"""The effect ledger on Firestore: `users/{uid}/effects/{key}` (erased with the user's data)."""

from __future__ import annotations

import hashlib
from typing import Any

from google.cloud import firestore

from confidant.effects.ledger import EffectRecord, EffectState

USERS = "users"
EFFECTS = "effects"


def _doc_id(key: str) -> str:
    # Keys may hold characters Firestore ids refuse ("/"); the key itself is kept in the document.
    return hashlib.sha256(key.encode()).hexdigest()


class FirestoreEffectLedger:
    def __init__(self, client: firestore.AsyncClient) -> None:
        self.client = client

    def _ref(self, user_id: str, key: str) -> firestore.AsyncDocumentReference:
        return (
            self.client.collection(USERS)
            .document(user_id)
            .collection(EFFECTS)
            .document(_doc_id(key))
        )

    async def begin(self, user_id: str, key: str, *, now: float) -> EffectRecord:
        ref = self._ref(user_id, key)
        transaction = self.client.transaction()

        @firestore.async_transactional
        async def attempt(tx: Any) -> EffectRecord:
            snapshot = await ref.get(transaction=tx)
            if not snapshot.exists:
                record = EffectRecord(key=key, state=EffectState.PENDING, updated_at=now)
            else:
                record = EffectRecord.model_validate(snapshot.to_dict())
                if record.state is EffectState.DONE:
                    return record
                record = record.model_copy(
                    update={"attempts": record.attempts + 1, "updated_at": now}
                )
            tx.set(ref, record.model_dump(mode="json"))
            return record

        return await attempt(transaction)

    async def finish(self, user_id: str, key: str, result: dict[str, Any], *, now: float) -> None:
        await self._ref(user_id, key).update(
            {"state": EffectState.DONE.value, "result": result, "updated_at": now}
        )

    async def get(self, user_id: str, key: str) -> EffectRecord | None:
        snapshot = await self._ref(user_id, key).get()
        return EffectRecord.model_validate(snapshot.to_dict()) if snapshot.exists else None

    async def delete_user(self, user_id: str) -> int:
        effects = self.client.collection(USERS).document(user_id).collection(EFFECTS)
        return await self.client.recursive_delete(effects)

    async def close(self) -> None:
        return None  # the client belongs to the composition root
