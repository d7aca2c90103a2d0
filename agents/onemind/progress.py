"""onemind's four stages in the shared progress vocabulary (agents/protocols/progress.py).

`phase` is the stage id, `step` its 1-based position, `progress` the finished fraction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.onemind import state_keys
from agents.onemind.prompts import STAGE_NAMES
from agents.onemind.stages import STAGE_ORDER, parse_stage, stage_index
from agents.protocols.progress import progress_payload

PROTOCOL_ID = "onemind"


def onemind_progress(state_delta: Mapping[str, Any]) -> dict[str, Any] | None:
    """The progress a state change means, or None when it moves no stage."""
    if state_keys.CURRENT_STAGE not in state_delta:
        return None
    stage = parse_stage(state_delta[state_keys.CURRENT_STAGE])
    if stage is None:
        return None
    step = stage_index(stage)
    return progress_payload(
        PROTOCOL_ID,
        step=step,
        total_steps=len(STAGE_ORDER),
        phase=stage.value,
        done=step - 1,
        step_name=STAGE_NAMES[stage],
    )
