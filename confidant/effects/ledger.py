"""The effect ledger port and the exactly-once protocol every external write goes through.

ADK runs tools at least once: a resumed, retried or re-sent turn calls the tool again, and a
process can die between the external call and the commit of the turn (the turn then commits
nothing). So the key of an effect is derived from what survives all of that (the paused run
the human approved, never the model's fresh call id), and the ledger is written in storage of
its own, *before* the call:

1. `begin(key)` records `pending` (or returns what an earlier attempt recorded).
2. `done` → return the recorded result; the external system is not called again.
3. `pending` from an earlier attempt → that attempt may or may not have reached the external
   system, so ask it (`reconcile`, a lookup by the key the effect carries); found → record it.
4. Otherwise call the external system with the key, then record `done`.

Together with a writer that stores the key on the external record, the external system sees
each key's effect once: 0 duplicates, 0 losses (tests/integration/effects count them).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Any, Protocol

from pydantic import BaseModel


class EffectState(StrEnum):
    PENDING = "pending"
    DONE = "done"


class EffectRecord(BaseModel):
    key: str
    state: EffectState
    attempts: int = 1  # how many times `begin` saw this key (1 = this is the first attempt)
    result: dict[str, Any] | None = None
    updated_at: float = 0.0


class EffectLedger(Protocol):
    """Idempotency records of external effects, owned by the user (erased with their data)."""

    async def begin(self, user_id: str, key: str, *, now: float) -> EffectRecord:
        """Record an attempt atomically: a new `pending` record, or the existing one with
        `attempts` incremented (a `done` record is returned unchanged)."""
        ...

    async def finish(self, user_id: str, key: str, result: dict[str, Any], *, now: float) -> None:
        """Mark the effect done with its result."""
        ...

    async def get(self, user_id: str, key: str) -> EffectRecord | None: ...

    async def delete_user(self, user_id: str) -> int:
        """Erase the user's records (DELETE /v1/me); how many went."""
        ...

    async def close(self) -> None: ...


Effect = Callable[[], Awaitable[dict[str, Any]]]
Reconcile = Callable[[], Awaitable[dict[str, Any] | None]]


async def perform_once(
    ledger: EffectLedger,
    user_id: str,
    key: str,
    effect: Effect,
    reconcile: Reconcile,
    *,
    now: Callable[[], float],
) -> tuple[dict[str, Any], bool]:
    """Run `effect` at most once per key; returns (its result, whether this call performed it)."""
    record = await ledger.begin(user_id, key, now=now())
    if record.state is EffectState.DONE and record.result is not None:
        return record.result, False
    if record.attempts > 1:
        found = await reconcile()
        if found is not None:
            await ledger.finish(user_id, key, found, now=now())
            return found, False
    result = await effect()
    await ledger.finish(user_id, key, result, now=now())
    return result, True
