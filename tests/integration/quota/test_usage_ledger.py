"""The usage ledger on both backends (Firestore emulator, SQLite file): admissions are counted
atomically under concurrency, tokens add up, refusals and take-backs leave exact counts."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agents.safety import CrisisDetector
from confidant.ports import UsageLedger
from confidant.profiles.ops import MergeOp
from confidant.quota.firestore_ledger import (
    DAYS,
    USAGE,
    USAGE_RETENTION,
    FirestoreUsageLedger,
)
from confidant.quota.gate import QuotaGate
from confidant.quota.sqlite_ledger import SqliteUsageLedger
from confidant.sessions.store import SessionStore
from confidant.settings import TierLimits
from tests.support import stores

DAY = "2026-11-23"


@pytest.fixture(params=["sqlite", "firestore"])
async def ledger(request, tmp_path) -> AsyncIterator[UsageLedger]:  # type: ignore[no-untyped-def]
    if request.param == "firestore":
        request.getfixturevalue("firestore_emulator")
        yield FirestoreUsageLedger(stores.emulator_client())
    else:
        sqlite = SqliteUsageLedger(str(tmp_path / "usage.db"))
        yield sqlite
        await sqlite.close()


def _user() -> str:
    return f"u-{uuid.uuid4().hex[:10]}"


async def test_twenty_concurrent_admissions_at_a_limit_of_ten_admit_exactly_ten(ledger) -> None:
    user = _user()
    results = await asyncio.gather(
        *(ledger.admit(user, DAY, max_turns=10, max_tokens=None) for _ in range(20))
    )
    assert sum(admitted for admitted, _ in results) == 10
    assert (await ledger.usage(user, DAY)).turns == 10
    assert all(usage.turns <= 10 for _, usage in results)
    # The next day starts from zero.
    admitted, usage = await ledger.admit(user, "2026-11-24", max_turns=10, max_tokens=None)
    assert admitted and usage.turns == 1


async def test_firestore_day_counters_expire_a_retention_after_their_day(request) -> None:
    # Firestore's TTL policy on `expire_at` (infra firestore.tf) deletes past days' counters.
    request.getfixturevalue("firestore_emulator")
    ledger = FirestoreUsageLedger(stores.emulator_client())
    user = _user()
    await ledger.admit(user, DAY, max_turns=None, max_tokens=None)
    await ledger.charge_tokens(user, "2026-11-24", 5)  # a day first written by a charge
    days = ledger.client.collection(USAGE).document(user).collection(DAYS)
    admitted = (await days.document(DAY).get()).get("expire_at")
    assert admitted == datetime(2026, 11, 24, tzinfo=UTC) + USAGE_RETENTION
    charged = (await days.document("2026-11-24").get()).get("expire_at")
    assert charged == datetime(2026, 11, 25, tzinfo=UTC) + USAGE_RETENTION


async def test_two_embedded_ledgers_on_one_file_share_the_count(tmp_path) -> None:
    """Two processes on one SQLite file: BEGIN IMMEDIATE serialises their admissions."""
    path = str(tmp_path / "shared-usage.db")
    first, second = SqliteUsageLedger(path), SqliteUsageLedger(path)
    try:
        results = await asyncio.gather(
            *(
                (first if i % 2 else second).admit("u", DAY, max_turns=10, max_tokens=None)
                for i in range(20)
            )
        )
        assert sum(admitted for admitted, _ in results) == 10
        assert (await first.usage("u", DAY)).turns == 10
    finally:
        await first.close()
        await second.close()


async def test_tokens_add_up_and_a_spent_token_quota_refuses_without_counting(ledger) -> None:
    user = _user()
    assert (await ledger.admit(user, DAY, max_turns=None, max_tokens=100))[0]
    await asyncio.gather(*(ledger.charge_tokens(user, DAY, 7) for _ in range(20)))
    assert (await ledger.usage(user, DAY)).tokens == 140
    admitted, usage = await ledger.admit(user, DAY, max_turns=None, max_tokens=100)
    assert not admitted and usage.turns == 1 and usage.tokens == 140
    assert (await ledger.usage(user, DAY)).turns == 1


async def test_a_released_turn_no_longer_counts_and_erasure_removes_the_usage(ledger) -> None:
    user = _user()
    for _ in range(3):
        await ledger.admit(user, DAY, max_turns=None, max_tokens=None)
    await ledger.release_turn(user, DAY)
    assert (await ledger.usage(user, DAY)).turns == 2
    assert await ledger.delete_user(user) >= 1
    assert (await ledger.usage(user, DAY)).turns == 0


async def test_erasure_can_keep_one_days_counters(ledger) -> None:
    user, yesterday = _user(), "2000-01-01"
    await ledger.admit(user, yesterday, max_turns=None, max_tokens=None)
    await ledger.admit(user, DAY, max_turns=None, max_tokens=None)
    assert await ledger.delete_user(user, keep_day=DAY) == 1
    assert (await ledger.usage(user, yesterday)).turns == 0
    assert (await ledger.usage(user, DAY)).turns == 1


@asynccontextmanager
async def _store_and_ledger(
    request: pytest.FixtureRequest, tmp_path: Path, backend: str, name: str
) -> AsyncIterator[tuple[SessionStore, UsageLedger]]:
    """A session store and a usage ledger beside it, as deployed on `backend` (the SQLite
    ledger in its own file `name`.db, the Firestore one on the store's client)."""
    if backend == "firestore":
        request.getfixturevalue("firestore_emulator")
        context = stores.firestore_store()
    else:
        context = stores.sqlite_store(tmp_path)
    async with context as store:
        ledger: UsageLedger = (
            FirestoreUsageLedger(store.client)  # type: ignore[attr-defined]
            if backend == "firestore"
            else SqliteUsageLedger(str(tmp_path / f"{name}.db"))
        )
        try:
            yield store, ledger
        finally:
            await ledger.close()


@pytest.mark.parametrize("backend", ["sqlite", "firestore"])
async def test_erasing_the_users_stored_data_leaves_the_ledger_to_the_gate(
    request, tmp_path, backend
) -> None:
    # DELETE /v1/me erases the session store's user (recursively, on Firestore) and then asks
    # the gate, which keeps today's counters: they must not live inside the erased subtree.
    async with _store_and_ledger(request, tmp_path, backend, "erase-usage") as (store, ledger):
        user = _user()
        await ledger.admit(user, DAY, max_turns=None, max_tokens=None)
        await store.update_profile(user, [MergeOp(("account",), {"display_name": "x"})])
        await store.delete_user(user)
        assert (await ledger.usage(user, DAY)).turns == 1


@pytest.mark.parametrize("backend", ["sqlite", "firestore"])
async def test_the_gate_reads_the_tier_from_the_stored_profile(request, tmp_path, backend) -> None:
    async with _store_and_ledger(request, tmp_path, backend, "gate-usage") as (store, ledger):
        tiers = {"free": TierLimits(turns_per_day=1), "plus": TierLimits(turns_per_day=3)}
        gate = QuotaGate(ledger, store, tiers, "free", crisis_detector=CrisisDetector())
        user = _user()
        await store.update_profile(user, [MergeOp(("account",), {"tier": "plus"})])
        admissions = await asyncio.gather(
            *(gate.admit(user, "hello") for _ in range(3)), return_exceptions=True
        )
        assert all(not isinstance(a, BaseException) for a in admissions)
        report = await gate.report(user)
        assert report["tier"] == "plus" and report["remaining"]["turns_per_day"] == 0
