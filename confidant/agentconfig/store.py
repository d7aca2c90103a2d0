"""The agent-config store port: an append-only list of versions per app, and its head.

Firestore layout (the SQLite adapter keeps the same shape in one table):

    agent_configs/{app}                  the current version (a copy of its version document)
    agent_configs/{app}/versions/{n}     every version, n = 1, 2, … (ids zero-padded)

Listing versions orders one collection by `version` (a single-field index Firestore builds by
itself); no composite index is needed.
"""

from __future__ import annotations

from typing import Protocol

from confidant.agentconfig.config import AgentConfig, ConfigVersion

AGENT_CONFIGS = "agent_configs"
VERSIONS = "versions"


class AgentConfigStore(Protocol):
    async def head(self, app: str) -> ConfigVersion | None:
        """The current version, or None while the app was never configured."""
        ...

    async def append(
        self, app: str, config: AgentConfig, *, author: str, rolled_back_from: int | None = None
    ) -> ConfigVersion:
        """Store `config` as version head+1 and make it current, atomically."""
        ...

    async def get_version(self, app: str, version: int) -> ConfigVersion | None: ...

    async def list_versions(self, app: str, *, limit: int) -> list[ConfigVersion]:
        """Newest first."""
        ...

    async def close(self) -> None: ...


def version_doc_id(version: int) -> str:
    return f"{version:08d}"
