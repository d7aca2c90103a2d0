"""Taskflow through the chat API in-process, writing to a local Notion-shaped server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from confidant.bootstrap import Runtime, build_runtime
from confidant.sessions.records import SessionKey, SessionRecord, TurnWrite
from confidant.settings import Settings
from tests.support.fake_notion import DATABASE_ID, TOKEN, FakeNotion
from tests.unit.conftest import asgi_app


class CrashingStore:
    """A session store that dies once at commit when armed: the turn's effects have happened,
    its commit never does (as when the process is killed between the two)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.crash_next_commit = False
        self.crashes = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def commit(self, key: SessionKey, write: TurnWrite) -> SessionRecord:
        if self.crash_next_commit:
            self.crash_next_commit = False
            self.crashes += 1
            raise RuntimeError("injected crash before the turn's commit")
        return await self._inner.commit(key, write)


@pytest.fixture
def notion() -> Iterator[FakeNotion]:
    with FakeNotion() as server:
        yield server


@pytest.fixture
async def notion_runtime(tmp_path, notion) -> AsyncIterator[tuple[httpx.AsyncClient, Runtime]]:  # type: ignore[no-untyped-def]
    settings = Settings(
        sqlite_path=str(tmp_path / "confidant.db"),
        # Fifty runs by one user in seconds: rate limits are not what is tested here.
        rate_limit_user_per_min=0,
        rate_limit_ip_per_min=0,
        model="offline",
        tasks="notion",
        notion_token=TOKEN,
        notion_database_id=DATABASE_ID,
        notion_base_url=notion.base_url,
        notion_max_attempts=3,
    )
    runtime = build_runtime(settings)
    runtime.sessions.store = CrashingStore(runtime.sessions.store)  # type: ignore[assignment]
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=asgi_app(runtime)), base_url="http://confidant.test"
    )
    yield client, runtime
    await client.aclose()
    await runtime.close()
