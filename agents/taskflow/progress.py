"""Taskflow's step changes as `data-protocol-progress` parts, in the shared vocabulary
(agents/protocols/progress.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.protocols.progress import progress_payload
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
    if step is Step.CANCELLED:  # the shared vocabulary's `cancelled` phase ends the bar
        return progress_payload(
            PROTOCOL_ID,
            step=0,
            total_steps=len(STEP_ORDER),
            phase=step.value,
            done=0,
            step_name="Cancelled",
        )
    if step not in STEP_ORDER:
        return None  # steps outside the run's spine (planning, review, writing) move no bar
    position = STEP_ORDER.index(step) + 1
    return progress_payload(
        PROTOCOL_ID,
        step=position,
        total_steps=len(STEP_ORDER),
        phase=step.value,
        done=len(STEP_ORDER) if step is Step.DONE else position - 1,
        step_name=step.value.replace("_", " ").capitalize(),
    )
