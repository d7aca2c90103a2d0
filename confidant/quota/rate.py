"""Request rate limits per user and per client IP: a token bucket per key, per instance.

Per instance on purpose: instances are stateless and Cloud Run runs at most `max_instances` of
them, so a client gets at most `max_instances` times its rate across the service, which bounds a
flood's cost without a shared counter (a Firestore write per request would cost more than most
requests). Floods by IP are stopped before they reach an instance by Cloud Armor's rate-based
rule (infra/modules/confidant/armor.tf, `armor_enabled`); these buckets are the backstop and
the per-user limit Cloud Armor cannot see. Daily quotas, which must hold across instances, are
counted in the store (confidant/quota/gate.py).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping

_MAX_KEYS = 100_000  # buckets kept per limiter; the least recently used go first


class RateLimiter:
    """`per_minute` requests a minute on average, `burst` at once; 0 per minute = unlimited."""

    def __init__(
        self,
        per_minute: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = _MAX_KEYS,
    ) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> level, at

    def take(self, key: str) -> int | None:
        """Take one token for `key`: None when allowed, else seconds until one is available."""
        if self.rate <= 0:
            return None
        now = self._clock()
        level, at = self._buckets.pop(key, (self.burst, now))
        level = min(self.burst, level + (now - at) * self.rate)
        allowed = level >= 1.0
        if allowed:
            level -= 1.0
        self._buckets[key] = (level, now)
        if len(self._buckets) > self._max_keys:
            self._buckets.popitem(last=False)
        return None if allowed else max(1, math.ceil((1.0 - level) / self.rate))


def client_ip(
    headers: Mapping[str, str], peer: str | None, *, behind_google: bool, hops: int
) -> str:
    """The caller's address.

    On Cloud Run every request passes Google's front end, which appends the address it saw to
    `X-Forwarded-For`; entries left of it were sent by the client and can say anything. So only
    the `hops`-th entry from the right is trusted (1: the one Cloud Run's front end added; 2
    behind an external Application Load Balancer, which adds its own address after the client's).
    Locally nothing is in front of the server, and the header is the client's own words: the
    socket's peer is the address.
    """
    if behind_google:
        forwarded = [e.strip() for e in headers.get("x-forwarded-for", "").split(",") if e.strip()]
        if len(forwarded) >= hops:
            return forwarded[-hops]
    return peer or "unknown"
