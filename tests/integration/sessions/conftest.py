"""Every session backend, as a fixture parameter: the contract suite runs against each."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from google.adk.sessions import BaseSessionService, InMemorySessionService

from confidant.sessions.records import TailPolicy
from confidant.sessions.service import ConfidantSessionService
from tests.support import stores

SMALL_TAIL = TailPolicy(window=6, flush_batch=4)


@pytest.fixture(params=["sqlite", "firestore"])
async def store(request, tmp_path) -> AsyncIterator[stores.SessionStore]:  # type: ignore[no-untyped-def]
    """Our SessionStore adapters, with a small tail so that chunking happens in short tests."""
    if request.param == "firestore":
        request.getfixturevalue("firestore_emulator")
        async with stores.firestore_store(SMALL_TAIL) as store:
            yield store
    else:
        async with stores.sqlite_store(tmp_path, SMALL_TAIL) as store:
            yield store


@pytest.fixture(params=["adk-in-memory", "sqlite", "firestore"])
async def session_service(request, tmp_path) -> AsyncIterator[BaseSessionService]:  # type: ignore[no-untyped-def]
    if request.param == "adk-in-memory":
        yield InMemorySessionService()
        return
    if request.param == "firestore":
        request.getfixturevalue("firestore_emulator")
        async with stores.firestore_store() as store:
            yield ConfidantSessionService(store)
    else:
        async with stores.sqlite_store(tmp_path) as store:
            yield ConfidantSessionService(store)
