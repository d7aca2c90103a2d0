"""Context sources of the relationship app: the person a turn is about, and the self-profile."""

from __future__ import annotations

from typing import Any

from confidant.chat.context import ContextRequest
from confidant.relationship.service import RelationshipService

PERSON = "person"
SELF_PROFILE = "self_profile"
PERSON_ID_OPTION = "person_id"


class PersonSource:
    """The person named by the request's `person_id` (a dict), None when none is named.

    A `person_id` the user does not own is a 404 before anything is streamed.
    """

    def __init__(self, service: RelationshipService) -> None:
        self._service = service

    async def load(self, request: ContextRequest) -> Any:
        person_id = request.options.get(PERSON_ID_OPTION)
        if not person_id:
            return None
        person = await self._service.get_person(request.user_id, str(person_id))
        return person.model_dump()


class SelfProfileSource:
    """The user's self-profile (a dict), None while it is empty."""

    def __init__(self, service: RelationshipService) -> None:
        self._service = service

    async def load(self, request: ContextRequest) -> Any:
        profile = await self._service.get_self_profile(request.user_id)
        return None if profile.is_empty() else profile.model_dump()
