"""Reading and changing app agent configs: a short per-process cache in front of the store.

Every turn reads its app's config through `AgentConfigSource`, a context source the chat
service loads in parallel with the session lease (so a cache miss costs no extra round trip on
the turn's path). The tree is rebuilt per request, so a changed config applies from the next
turn: at once on the instance that took the change (its cache entry is dropped), within
`ttl_s` on every other instance.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from confidant.agentconfig.config import AgentConfig, ConfigVersion
from confidant.agentconfig.store import AgentConfigStore
from confidant.chat.context import ContextRequest
from confidant.errors import NotFoundError

logger = logging.getLogger(__name__)

# The context source's name: its value (`ConfigVersion | None`) is `TurnContext.loaded[...]`.
AGENT_CONFIG = "agent_config"


class AgentConfigService:
    def __init__(
        self,
        store: AgentConfigStore,
        *,
        ttl_s: float = 10.0,
        models: Iterable[str] = (),
        allow_stdio: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self.models = tuple(models)  # the model names a config may pick
        self.allow_stdio = allow_stdio  # may a config name a stdio MCP server (local runs)
        self._clock = clock
        self._cache: dict[str, tuple[float, ConfigVersion | None]] = {}

    async def current(self, app: str) -> ConfigVersion | None:
        """The app's config as of at most `ttl_s` ago (None: never configured)."""
        now = self._clock()
        cached = self._cache.get(app)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            found = await self.store.head(app)
        except Exception:
            if cached is None:
                raise
            # Stale-if-error: a storage hiccup must not fail every turn, nor drop the config.
            logger.exception("reading the agent config of %s failed; using the cached one", app)
            return cached[1]
        self._cache[app] = (now + self.ttl_s, found)
        return found

    async def update(self, app: str, config: AgentConfig, *, author: str) -> ConfigVersion:
        stored = await self.store.append(app, config, author=author)
        self._cache.pop(app, None)
        return stored

    async def rollback(self, app: str, version: int, *, author: str) -> ConfigVersion:
        """A new version whose config is version `version`'s (history is never rewritten)."""
        old = await self.store.get_version(app, version)
        if old is None:
            raise NotFoundError(f"{app} has no agent config version {version}")
        stored = await self.store.append(app, old.config, author=author, rolled_back_from=version)
        self._cache.pop(app, None)
        return stored

    async def versions(self, app: str, *, limit: int = 50) -> list[ConfigVersion]:
        return await self.store.list_versions(app, limit=limit)

    async def close(self) -> None:
        await self.store.close()


class AgentConfigSource:
    """The turn's app config, from the per-process cache."""

    def __init__(self, service: AgentConfigService) -> None:
        self._service = service

    async def load(self, request: ContextRequest) -> Any:
        return await self._service.current(request.app)
