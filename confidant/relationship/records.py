"""Persons, the self-profile and profile proposals: validated shapes with size limits."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

MAX_PERSONS_PER_USER = 200
MAX_PENDING_PROPOSALS = 50

Tag = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=32)]
Value = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]


class PersonFields(BaseModel):
    """What a client may set on a person (the body of create / replace)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str = Field(min_length=1, max_length=80)
    relationship: str = Field(default="", max_length=60)  # e.g. partner, manager, mother
    tags: list[Tag] = Field(default_factory=list, max_length=20)
    status: str = Field(default="", max_length=300)  # where things stand right now
    notes: str = Field(default="", max_length=2000)


class Person(PersonFields):
    id: str
    created_at: float
    updated_at: float


class SelfProfileFields(BaseModel):
    """The user's picture of themselves (the body of a self-profile replace)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    about: str = Field(default="", max_length=1000)
    communication_style: str = Field(default="", max_length=300)
    attachment_style: str = Field(default="", max_length=100)
    values: list[Value] = Field(default_factory=list, max_length=20)
    goals: str = Field(default="", max_length=1000)


class SelfProfile(SelfProfileFields):
    updated_at: float = 0.0

    def is_empty(self) -> bool:
        return not any(getattr(self, name) for name in SelfProfileFields.model_fields)


ProposalTarget = Literal["self_profile", "person"]
ProposalStatus = Literal["pending", "accepted", "rejected"]


class ProposalChange(BaseModel):
    """One proposed update: which profile, which fields, what values."""

    model_config = ConfigDict(extra="forbid")

    target: ProposalTarget
    person_id: str | None = None
    changes: dict[str, Any] = Field(min_length=1, max_length=10)
    reason: str = Field(default="", max_length=300)

    def fingerprint(self) -> str:
        """Identifies the change verbatim: a rejected fingerprint is never proposed again."""
        canonical = json.dumps(
            [self.target, self.person_id, self.changes], sort_keys=True, ensure_ascii=False
        )
        return hashlib.sha256(canonical.encode()).hexdigest()[:32]


class Proposal(ProposalChange):
    id: str
    status: ProposalStatus = "pending"
    session_id: str | None = None
    created_at: float
    decided_at: float | None = None
