"""The four stages of the onemind protocol and their order."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from agents.onemind import state_keys


class Stage(StrEnum):
    """Stage ids, in protocol order (the values are what is stored in session state)."""

    AWARENESS = "stage_1_awareness"
    INTEGRATION = "stage_2_integration"
    MICRO_ACTION = "stage_3_micro_action"
    SOLIDIFICATION = "stage_4_solidification"


STAGE_ORDER: tuple[Stage, ...] = tuple(Stage)
FIRST_STAGE = Stage.AWARENESS
LAST_STAGE = Stage.SOLIDIFICATION


def parse_stage(value: object) -> Stage | None:
    """The Stage named by `value`, or None when it names no stage."""
    try:
        return Stage(value) if isinstance(value, str) else None
    except ValueError:
        return None


def stage_index(stage: Stage) -> int:
    """1-based position of `stage` in the protocol."""
    return STAGE_ORDER.index(stage) + 1


def next_stage(stage: Stage) -> Stage | None:
    """The stage after `stage`, or None after the last one."""
    position = STAGE_ORDER.index(stage)
    return STAGE_ORDER[position + 1] if position + 1 < len(STAGE_ORDER) else None


def current_stage(state: Mapping[str, Any]) -> Stage:
    """The stage stored in session state; stage 1 when absent or unreadable."""
    return parse_stage(state.get(state_keys.CURRENT_STAGE)) or FIRST_STAGE
