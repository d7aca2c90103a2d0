"""The effect ledger's contract, on SQLite and on the Firestore emulator."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from confidant.effects import EffectLedger, EffectState, perform_once
from confidant.effects.firestore_ledger import FirestoreEffectLedger
from confidant.effects.sqlite_ledger import SqliteEffectLedger
from tests.support.stores import emulator_client


@pytest.fixture(params=["sqlite", "firestore"])
async def ledger(request, tmp_path) -> AsyncIterator[EffectLedger]:  # type: ignore[no-untyped-def]
    if request.param == "firestore":
        request.getfixturevalue("firestore_emulator")
        chosen: EffectLedger = FirestoreEffectLedger(emulator_client())
    else:
        chosen = SqliteEffectLedger(str(tmp_path / "ledger.db"))
    yield chosen
    await chosen.close()


def _clock() -> float:
    return 1.0


async def test_begin_records_pending_then_counts_attempts_until_done(ledger):
    user, key = f"u-{uuid.uuid4().hex}", "taskflow/s/run/write_task"
    first = await ledger.begin(user, key, now=1.0)
    assert (first.state, first.attempts) == (EffectState.PENDING, 1)
    second = await ledger.begin(user, key, now=2.0)
    assert (second.state, second.attempts) == (EffectState.PENDING, 2)
    await ledger.finish(user, key, {"id": "page-1"}, now=3.0)
    done = await ledger.begin(user, key, now=4.0)
    assert (done.state, done.result, done.attempts) == (EffectState.DONE, {"id": "page-1"}, 2)
    assert await ledger.get(f"other-{user}", key) is None  # records are per user
    assert await ledger.delete_user(user) == 1
    assert await ledger.get(user, key) is None


async def test_perform_once_calls_the_effect_once_and_reconciles_an_unknown_outcome(ledger):
    user, key = f"u-{uuid.uuid4().hex}", "k/1"
    performed: list[str] = []
    external: dict[str, dict] = {}

    async def effect() -> dict:
        performed.append(key)
        external[key] = {"id": f"page-{len(performed)}"}
        raise ConnectionError("the answer was lost")  # the effect happened; we never heard

    async def reconcile() -> dict | None:
        return external.get(key)

    with pytest.raises(ConnectionError):
        await perform_once(ledger, user, key, effect, reconcile, now=_clock)
    result, did = await perform_once(ledger, user, key, effect, reconcile, now=_clock)
    assert (result, did, performed) == ({"id": "page-1"}, False, [key])
    again, did_again = await perform_once(ledger, user, key, effect, reconcile, now=_clock)
    assert (again, did_again, performed) == ({"id": "page-1"}, False, [key])


async def test_perform_once_retries_an_effect_that_never_happened(ledger):
    user, key = f"u-{uuid.uuid4().hex}", "k/2"
    calls: list[int] = []

    async def effect() -> dict:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("refused before anything happened")
        return {"id": "page-2"}

    async def reconcile() -> dict | None:
        return None

    with pytest.raises(ConnectionError):
        await perform_once(ledger, user, key, effect, reconcile, now=_clock)
    result, did = await perform_once(ledger, user, key, effect, reconcile, now=_clock)
    assert (result, did, len(calls)) == ({"id": "page-2"}, True, 2)
