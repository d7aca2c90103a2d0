"""The relationship app's own chat body fields (validated before the lease; 400 on error)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MIN_MAX_TOKENS = 64
MAX_MAX_TOKENS = 8192


class RelationshipOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # The person this turn is about (users/{uid}/persons/{id}); loaded into the instructions.
    # Not starting with `_`: Firestore reserves `__…__` document ids.
    person_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9-][A-Za-z0-9_-]{0,63}$")
    # A model from the deployment's allow-list (CONFIDANT_AGENT_MODELS.selectable).
    model: str | None = Field(default=None, min_length=1, max_length=100)
    # Skip the router: one specialist answers (what the strategy endpoints set).
    mode: Literal["analyze", "advise", "script"] | None = None
    # The reply's output budget (also sent to the model as max_output_tokens).
    max_tokens: int | None = Field(default=None, ge=MIN_MAX_TOKENS, le=MAX_MAX_TOKENS)
