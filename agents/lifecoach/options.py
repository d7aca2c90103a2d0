"""The lifecoach app's chat body fields: `skill` and `protocol_action` (invitation buttons)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class ProtocolAction(BaseModel):
    """The button the user pressed on a protocol card, e.g. {"protocol_id": "dankoe",
    "action": "start"}; `continue` / `cancel` answer the timeout confirmation."""

    model_config = ConfigDict(extra="forbid")
    action: Literal["start", "later", "continue", "cancel"]
    protocol_id: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_]{0,63}$")


class LifecoachOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    skill: str | None = None
    protocol_action: ProtocolAction | None = None

    @field_validator("skill")
    @classmethod
    def _known_skill(cls, value: str | None) -> str | None:
        from agents.lifecoach.agent import SKILLS

        if value is not None and value not in SKILLS:
            raise ValueError(f"unknown skill {value!r}; skills: {', '.join(SKILLS)}")
        return value
