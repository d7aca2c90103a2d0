"""What every offline script shares: the scripted answer and reading the system instruction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.models import LlmRequest
from google.genai import types


@dataclass(frozen=True)
class ScriptedTurn:
    """What the model answers: text, or one function call."""

    text: str | None = None
    call_name: str | None = None
    call_args: dict[str, Any] = field(default_factory=dict)


# An app's script: its answer when the request is for one of its agents, else None.
ScriptPlanner = Callable[[LlmRequest], ScriptedTurn | None]


def instruction_text(config: types.GenerateContentConfig | None) -> str:
    instruction = config.system_instruction if config else None
    if instruction is None:
        return ""
    if isinstance(instruction, str):
        return instruction
    if isinstance(instruction, types.Content):
        return "\n".join(part.text or "" for part in instruction.parts or [])
    if isinstance(instruction, types.Part):
        return instruction.text or ""
    if isinstance(instruction, Sequence):
        return "\n".join(
            item if isinstance(item, str) else getattr(item, "text", "") or ""
            for item in instruction
        )
    return ""
