"""Scripted planners of the offline model, one per app, chosen by the request itself.

Each app's planner recognises its own instruction (a marker line it renders) and returns None
for anything else, so the one process-wide offline model plays every app without shared code
naming any app. A planner returns a `ScriptedTurn` (text, or one function call).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.adk.models import LlmRequest

Planner = Callable[[LlmRequest], Any]  # -> ScriptedTurn | None

_PLANNERS: list[Planner] = []


def register_planner(planner: Planner) -> Planner:
    if planner not in _PLANNERS:
        _PLANNERS.append(planner)
    return planner


def scripted_turn(llm_request: LlmRequest) -> Any:
    """The first registered planner's answer, or None (the caller's default script plays)."""
    for planner in _PLANNERS:
        turn = planner(llm_request)
        if turn is not None:
            return turn
    return None
