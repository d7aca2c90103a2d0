"""Which offline script answers a request: apps name theirs in their system instruction.

An app's instruction carries a line `offline-script: <name>`; the offline model plays that
script, or the default (onemind) when there is none. So shared code never names an app, and a
new app brings its own script by registering it here from its offline module.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.adk.models import LlmRequest

SCRIPT_MARKER = "offline-script"
_SCRIPT_RE = re.compile(rf"^{SCRIPT_MARKER}:\s*(\S+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class ScriptedTurn:
    """What the model answers: text, one function call, or a text then a call."""

    text: str | None = None
    call_name: str | None = None
    call_args: dict[str, Any] = field(default_factory=dict)


Planner = Callable[[LlmRequest], ScriptedTurn]
_SCRIPTS: dict[str, Planner] = {}


def register_script(name: str, planner: Planner) -> None:
    _SCRIPTS[name] = planner


def script_for(instruction: str) -> Planner | None:
    """The planner the instruction names, or None (the default script)."""
    match = _SCRIPT_RE.search(instruction)
    return _SCRIPTS.get(match.group(1)) if match else None
