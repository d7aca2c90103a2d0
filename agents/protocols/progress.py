"""One progress vocabulary for every app: the `data-protocol-progress` payload.

    {"protocol_id", "step", "total_steps", "phase", "progress", "step_name"}

`step` is 1-based, `progress` the finished fraction (0.0-1.0), `phase` the protocol's own label
for the current step (or `awaiting_confirmation`, `paused`, `cancelled`, `completed`). A tool
that moves a protocol records the payload in session state under PROGRESS_STATE_KEY, and an
app declares `protocol_progress` as its `AppSpec.progress` reader to stream it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PROGRESS_STATE_KEY = "protocol_progress"
FIELDS = ("protocol_id", "step", "total_steps", "phase", "progress", "step_name")


def progress_payload(
    protocol_id: str, *, step: int, total_steps: int, phase: str, done: int, step_name: str
) -> dict[str, Any]:
    return {
        "protocol_id": protocol_id,
        "step": step,
        "total_steps": total_steps,
        "phase": phase,
        "progress": round(done / total_steps, 4) if total_steps else 0.0,
        "step_name": step_name,
    }


def protocol_progress(state_delta: Mapping[str, Any]) -> dict[str, Any] | None:
    """AppSpec.progress reader for apps whose tools record progress under PROGRESS_STATE_KEY."""
    value = state_delta.get(PROGRESS_STATE_KEY)
    if not isinstance(value, Mapping) or not all(f in value for f in FIELDS):
        return None
    return {f: value[f] for f in FIELDS}
