"""The unified profile's typed shape (seed 002 §3.2).

    users/{uid}
      account       vibe_id, display_name, tier, status
      birth_info    date, time, place, timezone
      preferences   voice_mode, language, timezone, subscribed_skills, push_settings, blocked_skills
      state         focus, updated_at
      skills        {skill_id: {section: ..., _meta: {updated_at}}}   one subtree per skill
      extracted     facts, concerns, goals, patterns                   (cross-skill, AI-extracted)

The whole profile is one Firestore document, so a turn reads it in one document read. It stays
under Firestore's 1 MiB document limit by limits per section (confidant/profiles/rules.py): each
write is at most MAX_WRITE_BYTES, a skill's subtree at most MAX_SKILL_BYTES, lists at most
MAX_LIST_ITEMS entries, and a stored report at most MAX_REPORT_CHARS; with the platform's
skill count bounded (MAX_SKILLS) the sum stays well below the limit.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from confidant.ports import Int64

ACCOUNT = "account"
BIRTH_INFO = "birth_info"
PREFERENCES = "preferences"
STATE = "state"
SKILLS = "skills"
EXTRACTED = "extracted"
PROFILE_SECTIONS = (ACCOUNT, BIRTH_INFO, PREFERENCES, STATE, SKILLS, EXTRACTED)
META = "_meta"  # per-skill bookkeeping ({updated_at}); never written by tools


class _Open(BaseModel):
    # Known fields are typed; stored extras survive a read (older/newer writers).
    model_config = ConfigDict(extra="allow")


class Account(_Open):
    vibe_id: str | None = None
    display_name: str | None = None
    tier: str | None = None
    status: str | None = None


class BirthInfo(_Open):
    date: str | None = None
    time: str | None = None
    place: str | None = None
    timezone: str | None = None


class Preferences(_Open):
    voice_mode: bool | None = None
    language: str | None = None
    timezone: str | None = None
    subscribed_skills: list[str] = Field(default_factory=list)
    push_settings: dict[str, Any] = Field(default_factory=dict)
    blocked_skills: list[str] = Field(default_factory=list)


class UserState(_Open):
    focus: list[str] = Field(default_factory=list)
    updated_at: str | None = None


class Extracted(_Open):
    facts: list[Any] = Field(default_factory=list)
    concerns: list[Any] = Field(default_factory=list)
    goals: list[Any] = Field(default_factory=list)
    patterns: list[Any] = Field(default_factory=list)


class Profile(BaseModel):
    """The whole profile as `GET /v1/me/profile` returns it."""

    account: Account = Field(default_factory=Account)
    birth_info: BirthInfo = Field(default_factory=BirthInfo)
    preferences: Preferences = Field(default_factory=Preferences)
    state: UserState = Field(default_factory=UserState)
    skills: dict[str, dict[str, Any]] = Field(default_factory=dict)
    extracted: Extracted = Field(default_factory=Extracted)

    @classmethod
    def from_stored(cls, stored: dict[str, Any]) -> Profile:
        """The typed profile; a section stored in an unexpected shape (an old writer) is shown
        as empty rather than failing the whole read (its data stays stored)."""
        sections = {k: v for k, v in stored.items() if k in PROFILE_SECTIONS}
        try:
            return cls.model_validate(sections)
        except ValidationError as exc:
            broken = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
            return cls.model_validate({k: v for k, v in sections.items() if k not in broken})


class AccountPatch(BaseModel):
    """The account fields a user may change themselves (tier and status are the platform's)."""

    model_config = ConfigDict(extra="forbid")
    display_name: str | None = Field(default=None, min_length=1, max_length=80)


class PreferencesPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    voice_mode: bool | None = None
    language: Literal["zh", "en"] | None = None
    timezone: str | None = Field(default=None, max_length=64)
    subscribed_skills: list[str] | None = Field(default=None, max_length=50)
    push_settings: dict[str, bool | str | Int64] | None = None
    blocked_skills: list[str] | None = Field(default=None, max_length=50)


class ProfilePatch(BaseModel):
    """`PATCH /v1/me/profile`: preferences and the user-editable account fields, merged in."""

    model_config = ConfigDict(extra="forbid")
    account: AccountPatch | None = None
    preferences: PreferencesPatch | None = None
