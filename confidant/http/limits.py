"""Request rate limits at the HTTP edge: per client IP before identity, per user after it.

A crisis message is never refused: when a POST to a route whose body is a chat message (the
chat, and an app's chat-like endpoints: their body is `ChatBody`) would be refused, its body is
read (within the body limit; the route then reuses it) and a message showing crisis risk goes
through. Any other route is refused for the rate whatever its body says. Only a message the
chat would accept (at most `max_message_chars`) is checked: a refused request must not buy a
detector run over a whole body of crisis words.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from agents.registry import Route
from agents.safety import CrisisDetector
from confidant.chat.requests import ChatBody
from confidant.errors import ConfidantError, TooManyRequestsError
from confidant.quota.crisis import body_message, is_crisis
from confidant.quota.rate import RateLimiter, client_ip
from confidant.settings import Settings


@dataclass
class RequestLimits:
    per_ip: RateLimiter
    per_user: RateLimiter
    behind_google: bool
    hops: int
    max_body_bytes: int
    max_message_chars: int
    crisis_detector: CrisisDetector  # the guard's own (one per process)

    @classmethod
    def from_settings(cls, settings: Settings, crisis_detector: CrisisDetector) -> RequestLimits:
        return cls(
            per_ip=RateLimiter(settings.rate_limit_ip_per_min, settings.rate_limit_ip_burst),
            per_user=RateLimiter(settings.rate_limit_user_per_min, settings.rate_limit_user_burst),
            behind_google=settings.k_service is not None,
            hops=settings.forwarded_hops,
            max_body_bytes=settings.max_body_bytes,
            max_message_chars=settings.max_message_chars,
            crisis_detector=crisis_detector,
        )

    async def check_ip(self, request: Request, route: Route | None) -> None:
        """`route`: the route the request is for (None when none serves it)."""
        peer = request.client.host if request.client else None
        ip = client_ip(request.headers, peer, behind_google=self.behind_google, hops=self.hops)
        wait = self.per_ip.take(ip)
        if wait is not None:
            await self._refuse(request, route, wait, "too many requests from this address")

    async def check_user(self, request: Request, user_id: str, route: Route | None) -> None:
        wait = self.per_user.take(user_id)
        if wait is not None:
            await self._refuse(request, route, wait, "too many requests from this account")

    async def _refuse(
        self, request: Request, route: Route | None, wait_s: int, reason: str
    ) -> None:
        if carries_chat_message(route):
            from confidant.http.routing import read_json  # the route reads the same, cached body

            try:
                body = await read_json(request, self.max_body_bytes)
            except ConfidantError:
                body = None  # not a chat message: refused for the rate
            message = body_message(body).strip()
            if len(message) <= self.max_message_chars and is_crisis(self.crisis_detector, message):
                return
        raise TooManyRequestsError(f"{reason}; try again in {wait_s} s", retry_after_s=wait_s)


def carries_chat_message(route: Route | None) -> bool:
    """A POST whose body is a chat message to an app (`ChatBody`, or a model built on it)."""
    return (
        route is not None
        and route.method == "POST"
        and route.body is not None
        and issubclass(route.body, ChatBody)
    )
