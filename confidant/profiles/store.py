"""The profile port. Both session stores implement it, so a turn's profile writes commit in the
same atomic write as its events (`TurnWrite.profile_ops`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from confidant.profiles.ops import ProfileOp


@dataclass(frozen=True)
class ProfileVersion:
    """The profile as a turn loaded it, and the store's token for that version (Firestore: the
    document's update time, or MISSING). A commit may then write the profile without reading it
    again, on the precondition that nobody wrote it since; otherwise it reads and retries."""

    stored: dict[str, Any]
    token: object


MISSING = object()  # the token of a profile document that did not exist


class ProfileStore(Protocol):
    async def load_profile(self, user_id: str) -> dict[str, Any]:
        """The stored profile (one document read); {} when the user has none."""
        ...

    async def load_profile_version(self, user_id: str) -> ProfileVersion | None:
        """The profile with its version token (one read), or None where the store keeps none."""
        ...

    async def update_profile(self, user_id: str, ops: list[ProfileOp]) -> dict[str, Any]:
        """Apply `ops` atomically outside a turn (PATCH, migration); returns the new profile."""
        ...

    async def replace_profile(
        self, user_id: str, profile: dict[str, Any], *, expected: dict[str, Any]
    ) -> bool:
        """Write `profile` whole if the stored one still equals `expected` (migration)."""
        ...

    async def list_profile_users(self, *, after: str | None, limit: int) -> list[str]:
        """User ids holding a profile, in id order, after `after` (migration pages)."""
        ...
