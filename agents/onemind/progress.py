"""onemind's protocol-progress vocabulary: the four stages as `data-protocol-progress` parts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.onemind import state_keys
from agents.onemind.stages import STAGE_ORDER, parse_stage, stage_index

PROTOCOL_ID = "onemind"


def onemind_progress(state_delta: Mapping[str, Any]) -> dict[str, Any] | None:
    """The progress a state change means, or None when it moves no stage."""
    if state_keys.CURRENT_STAGE not in state_delta:
        return None
    stage = parse_stage(state_delta[state_keys.CURRENT_STAGE])
    if stage is None:
        return None
    return {
        "protocol": PROTOCOL_ID,
        "stage": stage.value,
        "step": stage_index(stage),
        "steps": len(STAGE_ORDER),
    }
