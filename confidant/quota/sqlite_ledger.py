"""The usage ledger in the embedded SQLite file (local runs): one row per user per UTC day."""

from __future__ import annotations

from confidant.ports import DailyUsage
from confidant.sqlite import SqliteFile

_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage (
  user_id TEXT NOT NULL, day TEXT NOT NULL, turns INTEGER NOT NULL DEFAULT 0,
  tokens INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (user_id, day));
"""


class SqliteUsageLedger(SqliteFile):
    schema = _SCHEMA

    async def admit(
        self, user_id: str, day: str, *, max_turns: int | None, max_tokens: int | None
    ) -> tuple[bool, DailyUsage]:
        # One statement, so one atomic write (in this process and in another on the same file):
        # a new day's row starts counted when a first turn fits; an existing row counts only
        # while below both limits. A row comes back only when the turn was counted.
        fits_fresh = (max_turns is None or max_turns > 0) and (max_tokens is None or max_tokens > 0)
        async with self._use() as conn:
            cursor = await conn.execute(
                "INSERT INTO usage (user_id, day, turns) VALUES (?, ?, ?) "
                "ON CONFLICT (user_id, day) DO UPDATE SET turns = turns + 1 "
                "WHERE (? IS NULL OR turns < ?) AND (? IS NULL OR tokens < ?) "
                "RETURNING turns, tokens",
                (user_id, day, int(fits_fresh), max_turns, max_turns, max_tokens, max_tokens),
            )
            row = await cursor.fetchone()
            await cursor.close()
        if row is not None and row["turns"] > 0:
            return True, DailyUsage(day=day, turns=row["turns"], tokens=row["tokens"])
        return False, await self._read(user_id, day)

    async def release_turn(self, user_id: str, day: str) -> None:
        async with self._use() as conn:
            await conn.execute(
                "UPDATE usage SET turns = MAX(turns - 1, 0) WHERE user_id = ? AND day = ?",
                (user_id, day),
            )

    async def charge_tokens(self, user_id: str, day: str, tokens: int) -> None:
        async with self._use() as conn:
            await conn.execute(
                "INSERT INTO usage (user_id, day, tokens) VALUES (?, ?, ?) "
                "ON CONFLICT (user_id, day) DO UPDATE SET tokens = tokens + excluded.tokens",
                (user_id, day, tokens),
            )

    async def usage(self, user_id: str, day: str) -> DailyUsage:
        return await self._read(user_id, day)

    async def _read(self, user_id: str, day: str) -> DailyUsage:
        row = await self._fetch_one(
            "SELECT turns, tokens FROM usage WHERE user_id = ? AND day = ?", (user_id, day)
        )
        if row is None:
            return DailyUsage(day=day)
        return DailyUsage(day=day, turns=row["turns"], tokens=row["tokens"])

    async def delete_user(self, user_id: str, *, keep_day: str | None = None) -> int:
        async with self._use() as conn:
            cursor = await conn.execute(
                "DELETE FROM usage WHERE user_id = ? AND day IS NOT ?", (user_id, keep_day)
            )
        return max(cursor.rowcount, 0)
