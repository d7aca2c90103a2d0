"""One throwaway turn at start-up, so the first user does not pay ADK's lazy imports (~300 ms)."""

from __future__ import annotations

import logging
import time

from google.adk import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

import agents
from agents.deps import AgentDeps, TurnContext
from agents.offline.onemind_model import OfflineModel

logger = logging.getLogger(__name__)

_WARMUP_USER = "warmup"


async def warm_up(deps: AgentDeps, app_name: str) -> str:
    """Run `app_name` once in memory with the offline model; no storage, no real model call.

    Returns the reply, so callers (and tests) can see the turn really ran.
    """
    started = time.perf_counter()
    offline = AgentDeps(
        model=OfflineModel(), wisdom=deps.wisdom, crisis_detector=deps.crisis_detector
    )
    context = TurnContext(user_id=_WARMUP_USER, session_id=_WARMUP_USER, locale="en")
    runner = Runner(
        app=agents.build_app(app_name, offline, context),
        session_service=InMemorySessionService(),
        auto_create_session=True,
    )
    reply = []
    async for event in runner.run_async(
        user_id=_WARMUP_USER,
        session_id=_WARMUP_USER,
        new_message=types.UserContent("hello"),
    ):
        if event.content and event.is_final_response():
            reply += [p.text for p in event.content.parts or [] if p.text]
    logger.info("warm-up turn took %.0f ms", (time.perf_counter() - started) * 1000)
    return "".join(reply)
