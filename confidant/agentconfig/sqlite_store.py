"""AgentConfigStore on an embedded SQLite file (beside the session database)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from confidant.agentconfig.config import AgentConfig, ConfigVersion
from confidant.sqlite import SqliteFile

_SCHEMA = """
CREATE TABLE IF NOT EXISTS agent_config_versions (
  app TEXT NOT NULL, version INTEGER NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (app, version));
"""


class SqliteAgentConfigStore(SqliteFile):
    """The head is the highest version: appends happen in one `BEGIN IMMEDIATE` transaction,
    so two processes on one file cannot both write version n+1."""

    schema = _SCHEMA

    async def _select(self, sql: str, args: tuple[object, ...]) -> list[ConfigVersion]:
        rows = await self._fetch_all(sql, args)
        return [ConfigVersion.model_validate_json(row[0]) for row in rows]

    async def head(self, app: str) -> ConfigVersion | None:
        found = await self._select(
            "SELECT data FROM agent_config_versions WHERE app = ? ORDER BY version DESC LIMIT 1",
            (app,),
        )
        return found[0] if found else None

    async def append(
        self, app: str, config: AgentConfig, *, author: str, rolled_back_from: int | None = None
    ) -> ConfigVersion:
        async with self._transaction() as conn:
            async with conn.execute(
                "SELECT COALESCE(MAX(version), 0) FROM agent_config_versions WHERE app = ?",
                (app,),
            ) as cur:
                row = await cur.fetchone()
            stored = ConfigVersion(
                app=app,
                version=int(row[0] if row else 0) + 1,
                config=config,
                author=author,
                created_at=datetime.now(UTC),
                rolled_back_from=rolled_back_from,
            )
            await conn.execute(
                "INSERT INTO agent_config_versions (app, version, data) VALUES (?, ?, ?)",
                (app, stored.version, json.dumps(stored.to_json(), ensure_ascii=False)),
            )
        return stored

    async def get_version(self, app: str, version: int) -> ConfigVersion | None:
        found = await self._select(
            "SELECT data FROM agent_config_versions WHERE app = ? AND version = ?", (app, version)
        )
        return found[0] if found else None

    async def list_versions(self, app: str, *, limit: int) -> list[ConfigVersion]:
        return await self._select(
            "SELECT data FROM agent_config_versions WHERE app = ? ORDER BY version DESC LIMIT ?",
            (app, limit),
        )
