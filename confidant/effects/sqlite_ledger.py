"""The effect ledger in the embedded SQLite file (local runs)."""

from __future__ import annotations

import json
from typing import Any

import aiosqlite

from confidant.effects.ledger import EffectRecord, EffectState
from confidant.sqlite import SqliteFile

_SCHEMA = """
CREATE TABLE IF NOT EXISTS effects (
  user_id TEXT NOT NULL, key TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL,
  result TEXT, updated_at REAL NOT NULL, PRIMARY KEY (user_id, key));
"""


class SqliteEffectLedger(SqliteFile):
    schema = _SCHEMA

    @staticmethod
    def _record(row: aiosqlite.Row) -> EffectRecord:
        return EffectRecord(
            key=row["key"],
            state=EffectState(row["state"]),
            attempts=row["attempts"],
            result=json.loads(row["result"]) if row["result"] else None,
            updated_at=row["updated_at"],
        )

    async def begin(self, user_id: str, key: str, *, now: float) -> EffectRecord:
        async with self._transaction() as conn:
            await conn.execute(
                "INSERT INTO effects VALUES (?, ?, 'pending', 1, NULL, ?) "
                "ON CONFLICT (user_id, key) DO UPDATE SET attempts = attempts + 1, "
                "updated_at = excluded.updated_at WHERE state = 'pending'",
                (user_id, key, now),
            )
            async with conn.execute(
                "SELECT * FROM effects WHERE user_id = ? AND key = ?", (user_id, key)
            ) as cursor:
                row = await cursor.fetchone()
        assert row is not None
        return self._record(row)

    async def finish(self, user_id: str, key: str, result: dict[str, Any], *, now: float) -> None:
        async with self._use() as conn:
            await conn.execute(
                "UPDATE effects SET state = 'done', result = ?, updated_at = ? "
                "WHERE user_id = ? AND key = ?",
                (json.dumps(result), now, user_id, key),
            )

    async def get(self, user_id: str, key: str) -> EffectRecord | None:
        row = await self._fetch_one(
            "SELECT * FROM effects WHERE user_id = ? AND key = ?", (user_id, key)
        )
        return None if row is None else self._record(row)

    async def delete_user(self, user_id: str) -> int:
        async with self._use() as conn:
            cursor = await conn.execute("DELETE FROM effects WHERE user_id = ?", (user_id,))
        return max(cursor.rowcount, 0)
