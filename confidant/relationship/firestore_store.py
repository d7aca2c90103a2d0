"""RelationshipStore on Firestore: `users/{uid}/{collection}/{doc_id}` documents."""

from __future__ import annotations

from typing import Any

from google.cloud import firestore

from confidant.relationship.store import PERSONS, PROPOSALS, RELATIONSHIP

USERS = "users"


class FirestoreRelationshipStore:
    """One AsyncClient per process, passed in (shared with the session store)."""

    def __init__(self, client: firestore.AsyncClient) -> None:
        self._client = client

    def _collection(self, user_id: str, collection: str) -> firestore.AsyncCollectionReference:
        return self._client.collection(USERS).document(user_id).collection(collection)

    async def get(self, user_id: str, collection: str, doc_id: str) -> dict[str, Any] | None:
        snapshot = await self._collection(user_id, collection).document(doc_id).get()
        return snapshot.to_dict() if snapshot.exists else None

    async def put(self, user_id: str, collection: str, doc_id: str, data: dict[str, Any]) -> None:
        await self._collection(user_id, collection).document(doc_id).set(data)

    async def list(self, user_id: str, collection: str) -> list[dict[str, Any]]:
        docs = [doc.to_dict() async for doc in self._collection(user_id, collection).stream()]
        return sorted(docs, key=lambda doc: doc.get("created_at", 0.0))

    async def delete(self, user_id: str, collection: str, doc_id: str) -> bool:
        reference = self._collection(user_id, collection).document(doc_id)
        if not (await reference.get()).exists:
            return False
        await reference.delete()
        return True

    async def delete_user(self, user_id: str) -> int:
        # Usually 0: the session store's recursive delete of users/{uid} already took these.
        removed = 0
        for collection in (PERSONS, RELATIONSHIP, PROPOSALS):
            removed += await self._client.recursive_delete(self._collection(user_id, collection))
        return removed

    async def close(self) -> None:
        return None  # the client is the process's
