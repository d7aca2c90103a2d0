"""The profile port. Both session stores implement it, so a turn's profile writes commit in the
same atomic write as its events (`TurnWrite.profile_ops`)."""

from __future__ import annotations

from typing import Any, Protocol

from confidant.profiles.ops import ProfileOp


class ProfileStore(Protocol):
    async def load_profile(self, user_id: str) -> dict[str, Any]:
        """The stored profile (one document read); {} when the user has none."""
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
