"""The `profile` context source: the user's unified profile, loaded alongside the lease."""

from __future__ import annotations

from confidant.chat.context import ContextRequest
from confidant.profiles.draft import ProfileDraft
from confidant.profiles.store import ProfileStore

PROFILE = "profile"


class ProfileSource:
    """One document read per turn; the draft also collects the turn's profile writes."""

    def __init__(self, store: ProfileStore) -> None:
        self._store = store

    async def load(self, request: ContextRequest) -> ProfileDraft:
        version = await self._store.load_profile_version(request.user_id)
        if version is None:
            return ProfileDraft(await self._store.load_profile(request.user_id))
        return ProfileDraft(version.stored, version=version)
