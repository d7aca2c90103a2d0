"""`GET /v1/me/usage`: the caller's tier, its daily limits, what is used and left, the reset."""

from __future__ import annotations

from pydantic import BaseModel, Field
from starlette.responses import Response

from agents.registry import Route
from confidant.http.routing import Call, json_reply
from confidant.settings import TierLimits


class UsageCounts(BaseModel):
    turns_per_day: int | None = Field(description="turns (null: unlimited, for `remaining`)")
    tokens_per_day: int | None = Field(description="model tokens (null: unlimited)")


class Usage(BaseModel):
    tier: str
    day: str = Field(description="the UTC day counted, YYYY-MM-DD")
    limits: TierLimits
    used: UsageCounts
    remaining: UsageCounts
    resets_at: str = Field(description="when the counts reset (UTC midnight, ISO 8601)")
    reset_in_s: int


async def usage(call: Call) -> Response:
    return json_reply(Usage.model_validate(await call.runtime.chat.quota.report(call.user_id)))


ROUTE = Route(
    "GET",
    "/v1/me/usage",
    usage,
    "the caller's daily quota: tier, limits, used, left, reset",
    responses={200: Usage},
)
