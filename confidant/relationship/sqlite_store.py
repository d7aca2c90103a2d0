"""RelationshipStore on an embedded SQLite file (beside the session database)."""

from __future__ import annotations

import json
from typing import Any

from confidant.sqlite import SqliteFile
from confidant.sqlite import sibling_path as sqlite_sibling_path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS relationship_docs (
  user_id TEXT NOT NULL, collection TEXT NOT NULL, doc_id TEXT NOT NULL, data TEXT NOT NULL,
  created_at REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, collection, doc_id));
"""


def sibling_path(session_db: str) -> str:
    """`.data/confidant.db` → `.data/confidant-relationship.db` (":memory:" stays in memory)."""
    return sqlite_sibling_path(session_db, "relationship")


class SqliteRelationshipStore(SqliteFile):
    """One connection per store; a lock serialises its use (as the session store does)."""

    schema = _SCHEMA

    async def get(self, user_id: str, collection: str, doc_id: str) -> dict[str, Any] | None:
        row = await self._fetch_one(
            "SELECT data FROM relationship_docs WHERE user_id = ? AND collection = ?"
            " AND doc_id = ?",
            (user_id, collection, doc_id),
        )
        return None if row is None else json.loads(row[0])

    async def put(self, user_id: str, collection: str, doc_id: str, data: dict[str, Any]) -> None:
        async with self._use() as conn:
            await conn.execute(
                "INSERT OR REPLACE INTO relationship_docs"
                " (user_id, collection, doc_id, data, created_at) VALUES (?, ?, ?, ?, ?)",
                (
                    user_id,
                    collection,
                    doc_id,
                    json.dumps(data, ensure_ascii=False),
                    float(data.get("created_at", 0.0)),
                ),
            )

    async def list(self, user_id: str, collection: str) -> list[dict[str, Any]]:
        rows = await self._fetch_all(
            "SELECT data FROM relationship_docs WHERE user_id = ? AND collection = ?"
            " ORDER BY created_at, doc_id",
            (user_id, collection),
        )
        return [json.loads(row[0]) for row in rows]

    async def delete(self, user_id: str, collection: str, doc_id: str) -> bool:
        async with self._use() as conn:
            cur = await conn.execute(
                "DELETE FROM relationship_docs WHERE user_id = ? AND collection = ? AND doc_id = ?",
                (user_id, collection, doc_id),
            )
        return cur.rowcount > 0

    async def delete_user(self, user_id: str) -> int:
        async with self._use() as conn:
            cur = await conn.execute("DELETE FROM relationship_docs WHERE user_id = ?", (user_id,))
        return max(cur.rowcount, 0)
