"""A circuit breaker per MCP server: after repeated failures, stop trying for a while."""

from __future__ import annotations

import time
from collections.abc import Callable


class CircuitBreaker:
    """Closed → open after `failures` consecutive failures; after `cooldown_s` one trial call
    is let through (half-open): its success closes the breaker, its failure opens it again.

    A server that hangs would otherwise cost every turn its full timeout.
    """

    def __init__(
        self, *, failures: int, cooldown_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.failures = failures
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._consecutive = 0
        self._open_until: float | None = None

    @property
    def is_open(self) -> bool:
        return self._open_until is not None and self._clock() < self._open_until

    def allow(self) -> bool:
        """May a call go to the server now? (Half-open lets one trial through per cooldown.)"""
        if self._open_until is None:
            return True
        now = self._clock()
        if now < self._open_until:
            return False
        self._open_until = now + self.cooldown_s  # the trial; later callers wait for it
        return True

    def success(self) -> None:
        self._consecutive = 0
        self._open_until = None

    def failure(self) -> None:
        self._consecutive += 1
        if self._consecutive >= self.failures:
            self._open_until = self._clock() + self.cooldown_s
