"""The relationship store port: small JSON documents kept under the user.

Collections (Firestore paths; the SQLite adapter keeps the same names in one table):

    users/{uid}/persons/{id}                  the people in the user's life
    users/{uid}/relationship/self_profile     the user's self-profile
    users/{uid}/profile_proposals/{id}        proposed profile updates (pending / decided)

The port is deliberately generic (get / put / list / delete of a document); validation and
rules live in `RelationshipService`, once for every backend.
"""

from __future__ import annotations

from typing import Any, Protocol

PERSONS = "persons"
RELATIONSHIP = "relationship"
SELF_PROFILE_DOC = "self_profile"
PROPOSALS = "profile_proposals"


class RelationshipStore(Protocol):
    async def get(self, user_id: str, collection: str, doc_id: str) -> dict[str, Any] | None: ...

    async def put(
        self, user_id: str, collection: str, doc_id: str, data: dict[str, Any]
    ) -> None: ...

    async def list(self, user_id: str, collection: str) -> list[dict[str, Any]]:
        """Every document of the collection, oldest first by `created_at`."""
        ...

    async def delete(self, user_id: str, collection: str, doc_id: str) -> bool: ...

    async def delete_user(self, user_id: str) -> int:
        """Erase every document of the user; how many went."""
        ...

    async def close(self) -> None: ...
