"""Versioned agent configs on every backend (SQLite file, Firestore emulator), and the cache."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable

import pytest

from confidant.agentconfig import AgentConfig, AgentConfigService
from confidant.agentconfig.firestore_store import FirestoreAgentConfigStore
from confidant.agentconfig.sqlite_store import SqliteAgentConfigStore
from confidant.agentconfig.store import AgentConfigStore
from confidant.errors import NotFoundError
from tests.support.stores import emulator_client

StoreFactory = Callable[[], AgentConfigStore]


@pytest.fixture(params=["sqlite", "firestore"])
async def new_store(request, tmp_path) -> AsyncIterator[StoreFactory]:  # type: ignore[no-untyped-def]
    """Opens stores on one backend: two of them are two instances sharing the storage."""
    opened: list[AgentConfigStore] = []
    if request.param == "firestore":
        request.getfixturevalue("firestore_emulator")

    def factory() -> AgentConfigStore:
        store: AgentConfigStore
        if request.param == "firestore":
            store = FirestoreAgentConfigStore(emulator_client())
        else:
            store = SqliteAgentConfigStore(str(tmp_path / "agents.db"))
        opened.append(store)
        return store

    yield factory
    for store in opened:
        await store.close()


def _app() -> str:
    return f"app-{uuid.uuid4().hex[:10]}"  # the emulator is shared by every test


def _config(text: str) -> AgentConfig:
    return AgentConfig.model_validate({"agents": {"*": {"instruction": {"text": text}}}})


def _text(config: AgentConfig) -> str:
    override = config.agents["*"]
    assert override.instruction is not None
    return override.instruction.text


async def test_every_change_is_a_new_version_and_rollback_restores_one(new_store) -> None:
    service = AgentConfigService(new_store())
    app = _app()
    assert await service.current(app) is None
    first = await service.update(app, _config("one"), author="root")
    second = await service.update(app, _config("two"), author="ops")
    assert (first.version, second.version) == (1, 2)
    assert _text((await service.current(app)).config) == "two"  # type: ignore[union-attr]

    restored = await service.rollback(app, 1, author="root")
    assert restored.version == 3 and restored.rolled_back_from == 1
    assert _text(restored.config) == "one"
    history = await service.versions(app)
    assert [(v.version, v.author, _text(v.config)) for v in history] == [
        (3, "root", "one"),
        (2, "ops", "two"),
        (1, "root", "one"),
    ]
    assert [v.version for v in await service.versions(app, limit=2)] == [3, 2]
    with pytest.raises(NotFoundError):
        await service.rollback(app, 7, author="root")
    assert len(await service.versions(app)) == 3  # a failed rollback adds nothing
    assert await service.current(_app()) is None  # apps do not see each other's configs


async def test_concurrent_changes_get_distinct_versions(new_store) -> None:
    stores = [new_store(), new_store()]
    app = _app()
    written = await asyncio.gather(
        *(
            AgentConfigService(stores[i % 2]).update(app, _config(f"c{i}"), author=f"a{i}")
            for i in range(6)
        )
    )
    assert sorted(v.version for v in written) == [1, 2, 3, 4, 5, 6]
    history = await AgentConfigService(stores[0]).versions(app)
    assert [v.version for v in history] == [6, 5, 4, 3, 2, 1]
    assert {_text(v.config) for v in history} == {f"c{i}" for i in range(6)}
    head = await stores[1].head(app)
    assert head is not None and head.version == 6


async def test_another_instance_sees_a_change_once_its_cache_expires(new_store) -> None:
    now = [100.0]
    app = _app()
    writer = AgentConfigService(new_store())
    reader = AgentConfigService(new_store(), ttl_s=5.0, clock=lambda: now[0])
    await writer.update(app, _config("old"), author="root")
    assert _text((await reader.current(app)).config) == "old"  # type: ignore[union-attr]

    await writer.update(app, _config("new"), author="root")
    now[0] += 4.9
    assert _text((await reader.current(app)).config) == "old"  # type: ignore[union-attr]
    now[0] += 0.2
    assert _text((await reader.current(app)).config) == "new"  # type: ignore[union-attr]

    # The instance that takes a change drops its own copy at once.
    await reader.update(app, _config("mine"), author="root")
    assert _text((await reader.current(app)).config) == "mine"  # type: ignore[union-attr]
