"""Both profile adapters (the session stores), as a fixture parameter."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.support import stores


@pytest.fixture(params=["sqlite", "firestore"])
async def store(request, tmp_path) -> AsyncIterator[stores.SessionStore]:  # type: ignore[no-untyped-def]
    if request.param == "firestore":
        request.getfixturevalue("firestore_emulator")
        async with stores.firestore_store() as store:
            yield store
    else:
        async with stores.sqlite_store(tmp_path) as store:
            yield store
