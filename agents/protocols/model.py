"""A protocol file: id, title, description, estimated time, and its steps.

Each step names its goal, the prompt fragment the agent gets while on it, the opening question,
an optional phase label (e.g. morning / evening), the JSON schema of the data the step must
collect, and optionally a skill section the collected data is merged into when the step is done.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict, Field, field_validator

_ID = r"^[a-z][a-z0-9_]{0,63}$"


class StepSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    goal: str
    prompt: str
    question: str
    phase: str = "in_progress"
    schema_: dict[str, Any] = Field(alias="schema")
    save_to: str | None = Field(default=None, pattern=_ID)

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        Draft202012Validator.check_schema(value)
        if value.get("type") != "object":
            raise ValueError("a step's schema must describe an object")
        return value


class ProtocolSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=_ID)
    title: str
    description: str
    estimated_time: str
    steps: list[StepSpec] = Field(min_length=1, max_length=20)

    @property
    def total_steps(self) -> int:
        return len(self.steps)

    def step(self, number: int) -> StepSpec:
        """Step `number`, 1-based."""
        return self.steps[number - 1]


def load_protocol(path: Path) -> ProtocolSpec:
    """Parse and validate one protocol file (errors name the file)."""
    try:
        return ProtocolSpec.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except Exception as exc:
        raise ValueError(f"invalid protocol file {path}: {exc}") from exc
