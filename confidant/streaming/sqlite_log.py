"""The stream log in the embedded SQLite file (the session store's connection and tables).

Two processes on one file share it as they share the sessions (WAL, `BEGIN IMMEDIATE`). Rows
expire like Firestore's TTL deletes documents: a stream's start deletes every expired row.
"""

from __future__ import annotations

from collections.abc import Sequence

from confidant.ports import StreamHead
from confidant.sessions.records import SessionKey
from confidant.sessions.sqlite_store import KEY_WHERE, SqliteSessionStore, key_args


class SqliteStreamLog:
    def __init__(self, store: SqliteSessionStore) -> None:
        self._store = store

    async def save(
        self,
        key: SessionKey,
        head: StreamHead,
        first: int,
        parts: Sequence[str],
        *,
        write_head: bool,
    ) -> None:
        names = (*key_args(key), head.turn_id)
        async with self._store.transaction() as conn:
            if write_head and head.status == "active":  # a stream starts: drop expired rows
                for table in ("stream_heads", "stream_parts"):
                    await conn.execute(
                        f"DELETE FROM {table} WHERE expire_at <= ?", (head.started_at,)
                    )
            if write_head:
                await conn.execute(
                    "INSERT OR REPLACE INTO stream_heads VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (*names, head.model_dump_json(), head.started_at, head.expire_at),
                )
            if parts:
                await conn.execute(
                    "INSERT OR REPLACE INTO stream_parts VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (*names, first, "\n".join(parts), head.expire_at),
                )

    async def latest(self, key: SessionKey) -> StreamHead | None:
        async with self._store.read() as conn:
            async with conn.execute(
                f"SELECT head FROM stream_heads WHERE {KEY_WHERE} ORDER BY started_at DESC LIMIT 1",
                key_args(key),
            ) as cur:
                row = await cur.fetchone()
        return None if row is None else StreamHead.model_validate_json(row["head"])

    async def parts(self, key: SessionKey, turn_id: str, *, first: int) -> list[str]:
        async with self._store.read() as conn:
            async with conn.execute(
                f"SELECT parts FROM stream_parts WHERE {KEY_WHERE} AND turn_id = ? AND first >= ?"
                " ORDER BY first",
                (*key_args(key), turn_id, first),
            ) as cur:
                rows = await cur.fetchall()
        return [part for row in rows for part in row["parts"].split("\n")]
