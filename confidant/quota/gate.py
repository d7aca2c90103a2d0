"""Daily quotas by tier: admit a turn before anything of it is loaded, charge its tokens after.

Seed 001 checks the quota first: a refused turn costs one ledger write (and, once a minute per
user and instance, a profile read for the tier), never a lease, a context load or a model call.
Days are UTC days; the quota resets at 00:00 UTC.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from agents.safety import CrisisDetector
from confidant.errors import QuotaExceededError
from confidant.ports import DailyUsage, UsageLedger
from confidant.profiles.store import ProfileStore
from confidant.quota.crisis import is_crisis
from confidant.settings import TierLimits

logger = logging.getLogger(__name__)

# A tier changes rarely (billing sets it): an instance reuses what it read for this long.
TIER_CACHE_TTL_S = 60.0
_TIER_CACHE_SIZE = 10_000


def utc_day(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")


def next_reset(now: float) -> datetime:
    today = datetime.fromtimestamp(now, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today + timedelta(days=1)


@dataclass(frozen=True)
class Admission:
    """A turn let in: whose, which day, under which limits, and the day's usage after it."""

    user_id: str
    day: str
    tier: str
    limits: TierLimits
    usage: DailyUsage
    counted: bool = True  # False: a crisis message admitted past the quota, not counted

    @property
    def tokens_left(self) -> int | None:
        cap = self.limits.tokens_per_day
        return None if cap is None or not self.counted else max(cap - self.usage.tokens, 0)


class QuotaGate:
    def __init__(
        self,
        ledger: UsageLedger,
        profiles: ProfileStore,
        tiers: Mapping[str, TierLimits],
        default_tier: str,
        *,
        crisis_detector: CrisisDetector,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ledger = ledger
        self._profiles = profiles
        self._tiers = dict(tiers)
        self._default_tier = default_tier
        self._crisis_detector = crisis_detector  # the guard's own (one per process)
        self._clock = clock
        self._tier_cache: OrderedDict[str, tuple[float, str]] = OrderedDict()

    async def tier_of(self, user_id: str) -> str:
        now = time.monotonic()
        cached = self._tier_cache.get(user_id)
        if cached is not None and now - cached[0] < TIER_CACHE_TTL_S:
            return cached[1]
        profile = await self._profiles.load_profile(user_id)
        account = profile.get("account") if isinstance(profile, dict) else None
        tier = account.get("tier") if isinstance(account, dict) else None
        if tier not in self._tiers:
            tier = self._default_tier
        self._tier_cache[user_id] = (now, tier)
        self._tier_cache.move_to_end(user_id)
        while len(self._tier_cache) > _TIER_CACHE_SIZE:
            self._tier_cache.popitem(last=False)
        return tier

    async def admit(self, user_id: str, message: str) -> Admission:
        """Count the turn, or raise QuotaExceededError (429) - unless the message shows crisis
        risk: then it is admitted anyway, uncounted, so the crisis reply always goes out."""
        now = self._clock()
        day = utc_day(now)
        tier = await self.tier_of(user_id)
        limits = self._tiers[tier]
        admitted, usage = await self.ledger.admit(
            user_id, day, max_turns=limits.turns_per_day, max_tokens=limits.tokens_per_day
        )
        if admitted:
            return Admission(user_id, day, tier, limits, usage)
        if is_crisis(self._crisis_detector, message):
            logger.warning("a crisis message was admitted past the quota (tier %s)", tier)
            return Admission(user_id, day, tier, limits, usage, counted=False)
        raise self.exceeded(tier, limits, usage, now)

    async def release(self, admission: Admission) -> None:
        """The admitted turn never started (busy session, store down): it does not count."""
        if not admission.counted:
            return
        try:
            await self.ledger.release_turn(admission.user_id, admission.day)
        except Exception:
            logger.exception("could not take back an admitted turn that never started")

    async def delete_user(self, user_id: str) -> int:
        """Erase the user's usage (DELETE /v1/me), except today's counters: two counts, no
        content, and erasing them would reset the quota (an erase a day would be unlimited)."""
        return await self.ledger.delete_user(user_id, keep_day=utc_day(self._clock()))

    async def charge(self, admission: Admission, tokens: int) -> None:
        """Charge the model tokens a turn used; accounting never fails the turn."""
        if tokens <= 0:
            return
        try:
            await self.ledger.charge_tokens(admission.user_id, admission.day, tokens)
        except Exception:
            logger.exception("charging %d tokens failed", tokens)

    def exceeded(
        self,
        tier: str,
        limits: TierLimits,
        usage: DailyUsage,
        now: float | None = None,
        *,
        by_tokens: bool = False,
    ) -> QuotaExceededError:
        now = self._clock() if now is None else now
        reset = next_reset(now)
        turns_cap = limits.turns_per_day
        if not by_tokens and turns_cap is not None and usage.turns >= turns_cap:
            what = f"today's {limits.turns_per_day} messages"
        else:
            what = f"today's {limits.tokens_per_day} model tokens"
        return QuotaExceededError(
            f"you have used {what} ({tier} tier); the quota resets at "
            f"{reset.strftime('%H:%M')} UTC",
            retry_after_s=int(reset.timestamp() - now) + 1,
        )

    async def report(self, user_id: str) -> dict[str, Any]:
        """`GET /v1/me/usage`: the tier, its limits, what is used and left, and the reset."""
        now = self._clock()
        tier = await self.tier_of(user_id)
        limits = self._tiers[tier]
        usage = await self.ledger.usage(user_id, utc_day(now))
        reset = next_reset(now)

        def left(cap: int | None, used: int) -> int | None:
            return None if cap is None else max(cap - used, 0)

        return {
            "tier": tier,
            "day": usage.day,
            "limits": limits.model_dump(),
            "used": {"turns_per_day": usage.turns, "tokens_per_day": usage.tokens},
            "remaining": {
                "turns_per_day": left(limits.turns_per_day, usage.turns),
                "tokens_per_day": left(limits.tokens_per_day, usage.tokens),
            },
            "resets_at": reset.isoformat().replace("+00:00", "Z"),
            "reset_in_s": int(reset.timestamp() - now) + 1,
        }
