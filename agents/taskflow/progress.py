"""Taskflow's step changes as `data-protocol-progress` parts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.taskflow import state_keys
from agents.taskflow.schemas import Step

PROTOCOL_ID = "taskflow"
STEP_ORDER = (Step.COLLECT, Step.CLASSIFY, Step.CONFIRM, Step.DONE)


def taskflow_progress(state_delta: Mapping[str, Any]) -> dict[str, Any] | None:
    """The progress a state change means, or None when the run's step did not move."""
    raw = state_delta.get(state_keys.STEP)
    if raw not in Step._value2member_map_:
        return None
    step = Step(raw)
    return {
        "protocol": PROTOCOL_ID,
        "stage": step.value,
        "step": STEP_ORDER.index(step) + 1 if step in STEP_ORDER else None,
        "steps": len(STEP_ORDER),
    }
