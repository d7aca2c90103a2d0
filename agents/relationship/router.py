"""The router: one small non-streaming model call that picks the turn's mode, before the tree.

It runs as the app's `before_run` hook (AppSpec.before_run), so the chat service stays free of
app branches: the hook's decision is streamed as `data-route`, returned as `route` in JSON
responses, recorded on a trace span, and handed to the tree builder through
`TurnContext.loaded`. Anything unparsable, failed or slow routes to `runner`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Mapping
from typing import Any

from google.adk.events import Event
from google.adk.models import BaseLlm, LlmRequest
from google.genai import types
from opentelemetry import trace
from pydantic import BaseModel

from agents.deps import AgentDeps, TurnContext
from agents.registry import TurnPrelude
from agents.relationship import roles, state_keys
from agents.relationship.instructions import SUMMARY, render_router_instruction
from confidant.errors import BadRequestError

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("confidant.relationship")

ROUTER_TIMEOUT_S = 8.0
MAX_REASON_CHARS = 120
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


class RouteData(BaseModel):
    """The `data-route` part: the mode the router picked, and why."""

    mode: str
    reason: str | None = None


class AgentData(BaseModel):
    """The `data-agent` part: the specialist that starts speaking."""

    name: str


DATA_PARTS = {"route": RouteData, "agent": AgentData}


def parse_route(text: str) -> dict[str, Any]:
    """`{"mode", "reason"?}` from the router's answer; `runner` for anything else."""
    try:
        answer = json.loads(_FENCE.sub("", text.strip()))
    except (json.JSONDecodeError, TypeError):
        return {"mode": roles.RUNNER, "reason": "unparsable router answer"}
    mode = answer.get("mode") if isinstance(answer, dict) else None
    if mode not in roles.ROUTER_MODES:
        return {"mode": roles.RUNNER, "reason": "unknown router mode"}
    route: dict[str, Any] = {"mode": mode}
    reason = answer.get("reason")
    if isinstance(reason, str) and reason.strip():
        route["reason"] = reason.strip()[:MAX_REASON_CHARS]
    return route


def router_request(model: BaseLlm, turn: TurnContext) -> LlmRequest:
    """Small input: the router instruction, the message and at most the rolling summary."""
    return LlmRequest(
        model=model.model,
        contents=[types.UserContent(turn.message)],
        config=types.GenerateContentConfig(
            system_instruction=render_router_instruction(turn.loaded.get(SUMMARY)),
            response_mime_type="application/json",
            temperature=0.0,
        ),
    )


async def _answer_text(model: BaseLlm, request: LlmRequest) -> str:
    text = ""
    async for response in model.generate_content_async(request, stream=False):
        if response.error_code:
            raise RuntimeError(f"router model error {response.error_code}")
        if response.content and response.content.parts:
            text = "".join(p.text or "" for p in response.content.parts if not p.thought)
    return text


async def decide_route(
    model: BaseLlm, turn: TurnContext, timeout_s: float = ROUTER_TIMEOUT_S
) -> dict[str, Any]:
    turn_span = trace.get_current_span()  # the turn's span, when the caller traces turns
    with tracer.start_as_current_span("relationship.router") as span:
        try:
            text = await asyncio.wait_for(
                _answer_text(model, router_request(model, turn)), timeout_s
            )
            route = parse_route(text)
        except TimeoutError:
            route = {"mode": roles.RUNNER, "reason": "router timed out"}
        except Exception:
            logger.exception("router call failed; routing to runner")
            route = {"mode": roles.RUNNER, "reason": "router failed"}
        for recorded in (span, turn_span):
            recorded.set_attribute("confidant.route.mode", route["mode"])
            if "reason" in route:
                recorded.set_attribute("confidant.route.reason", route["reason"])
    return route


def model_for(deps: AgentDeps, role: str, turn: TurnContext) -> BaseLlm:
    """The model of `role` for this turn (a request's `model` choice wins, except the router)."""
    if deps.models is None:
        return deps.model
    choice = None if role == roles.ROUTER else turn.options.get("model")
    return deps.models.for_agent(role, choice)


def check_model_choice(deps: AgentDeps, turn: TurnContext) -> None:
    choice = turn.options.get("model")
    if not choice:
        return
    allowed = deps.models.selectable if deps.models is not None else ()
    if choice not in allowed:
        names = ", ".join(allowed) if allowed else "none are configured"
        raise BadRequestError(f"unknown model {choice!r}; allowed models: {names}")


class SpeakerReader:
    """A `data-agent` part each time a specialist starts speaking (first text of its turn)."""

    def __init__(self) -> None:
        self._speaking: str | None = None

    def __call__(self, event: Event) -> Mapping[str, Any] | None:
        if event.author not in roles.SPECIALISTS or event.author == self._speaking:
            return None
        if not event.content or not any(p.text for p in event.content.parts or []):
            return None
        self._speaking = event.author
        return {"agent": {"name": event.author}}


async def before_run(deps: AgentDeps, turn: TurnContext) -> TurnPrelude:
    """The relationship app's `AppSpec.before_run`: route the turn (or honour a strategy mode)."""
    check_model_choice(deps, turn)
    strategy = turn.options.get("mode")
    if strategy in roles.STRATEGY_MODES:
        route = {"mode": roles.DIRECT, "agent": roles.STRATEGY_MODES[strategy]}
        turn.data_parts.watch(SpeakerReader())
        return TurnPrelude(loaded={state_keys.ROUTE: route})
    if deps.crisis_detector.detect(turn.message).risky:
        # The crisis guard answers this turn (it asks the same detector); the message is not sent
        # to any model.
        route = {"mode": roles.RUNNER, "reason": "crisis guard"}
    else:
        route = await decide_route(model_for(deps, roles.ROUTER, turn), turn)
    turn.data_parts.watch(SpeakerReader())
    return TurnPrelude(data={"route": route}, loaded={state_keys.ROUTE: route})
