"""Protocol progress the apps report to clients (`data-protocol-progress` stream parts)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.onemind import APP_NAME as ONEMIND_APP_NAME
from agents.onemind import state_keys as onemind_keys
from agents.onemind.stages import STAGE_ORDER, parse_stage, stage_index


def protocol_progress(app: str, state_delta: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a state change means for the app's protocol, or None when it is not progress."""
    if app == ONEMIND_APP_NAME and onemind_keys.CURRENT_STAGE in state_delta:
        stage = parse_stage(state_delta[onemind_keys.CURRENT_STAGE])
        if stage is not None:
            return {
                "protocol": "onemind",
                "stage": stage.value,
                "step": stage_index(stage),
                "steps": len(STAGE_ORDER),
            }
    return None
