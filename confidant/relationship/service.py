"""Persons, self-profile and profile proposals: validation and rules over the store port.

Every write goes through here — the HTTP endpoints, the orchestrator's profile-update tool and
accepted proposals alike — so a profile is validated the same way whoever changes it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from confidant.errors import BadRequestError, ConfidantError, NotFoundError
from confidant.relationship.records import (
    MAX_PENDING_PROPOSALS,
    MAX_PERSONS_PER_USER,
    Person,
    PersonFields,
    Proposal,
    ProposalChange,
    SelfProfile,
    SelfProfileFields,
)
from confidant.relationship.store import (
    PERSONS,
    PROPOSALS,
    RELATIONSHIP,
    SELF_PROFILE_DOC,
    RelationshipStore,
)

M = TypeVar("M", bound=BaseModel)


class TooManyError(ConfidantError):
    status = 409
    code = "limit_reached"


def validation_message(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}" for err in exc.errors()
    )


def validated(model: type[M], data: Mapping[str, Any], what: str) -> M:
    """`model` from `data`, or a 400 that says which field is wrong and why."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        raise BadRequestError(f"invalid {what}: {validation_message(exc)}") from None


class RelationshipService:
    def __init__(self, store: RelationshipStore, *, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self._clock = clock

    # -- persons --------------------------------------------------------------------------------

    async def list_persons(self, user_id: str) -> list[Person]:
        return [Person.model_validate(doc) for doc in await self.store.list(user_id, PERSONS)]

    async def find_person(self, user_id: str, person_id: str) -> Person | None:
        doc = await self.store.get(user_id, PERSONS, person_id)
        return None if doc is None else Person.model_validate(doc)

    async def get_person(self, user_id: str, person_id: str) -> Person:
        person = await self.find_person(user_id, person_id)
        if person is None:
            raise NotFoundError(f"person {person_id!r} not found")
        return person

    async def create_person(self, user_id: str, body: Mapping[str, Any]) -> Person:
        fields = validated(PersonFields, body, "person")
        if len(await self.store.list(user_id, PERSONS)) >= MAX_PERSONS_PER_USER:
            raise TooManyError(f"at most {MAX_PERSONS_PER_USER} persons per user")
        now = self._clock()
        person = Person(**fields.model_dump(), id=uuid.uuid4().hex, created_at=now, updated_at=now)
        await self.store.put(user_id, PERSONS, person.id, person.model_dump())
        return person

    async def replace_person(self, user_id: str, person_id: str, body: Mapping[str, Any]) -> Person:
        current = await self.get_person(user_id, person_id)
        fields = validated(PersonFields, body, "person")
        person = Person(
            **fields.model_dump(),
            id=current.id,
            created_at=current.created_at,
            updated_at=self._clock(),
        )
        await self.store.put(user_id, PERSONS, person.id, person.model_dump())
        return person

    async def update_person(
        self, user_id: str, person_id: str, changes: Mapping[str, Any]
    ) -> Person:
        current = await self.get_person(user_id, person_id)
        merged = current.model_dump(include=set(PersonFields.model_fields)) | dict(changes)
        return await self.replace_person(user_id, person_id, merged)

    async def delete_person(self, user_id: str, person_id: str) -> None:
        if not await self.store.delete(user_id, PERSONS, person_id):
            raise NotFoundError(f"person {person_id!r} not found")

    # -- self-profile ---------------------------------------------------------------------------

    async def get_self_profile(self, user_id: str) -> SelfProfile:
        doc = await self.store.get(user_id, RELATIONSHIP, SELF_PROFILE_DOC)
        return SelfProfile() if doc is None else SelfProfile.model_validate(doc)

    async def replace_self_profile(self, user_id: str, body: Mapping[str, Any]) -> SelfProfile:
        fields = validated(SelfProfileFields, body, "self-profile")
        profile = SelfProfile(**fields.model_dump(), updated_at=self._clock())
        await self.store.put(user_id, RELATIONSHIP, SELF_PROFILE_DOC, profile.model_dump())
        return profile

    async def update_self_profile(self, user_id: str, changes: Mapping[str, Any]) -> SelfProfile:
        current = await self.get_self_profile(user_id)
        merged = current.model_dump(include=set(SelfProfileFields.model_fields)) | dict(changes)
        return await self.replace_self_profile(user_id, merged)

    async def apply_change(self, user_id: str, change: ProposalChange) -> dict[str, Any]:
        """Apply one validated change; the updated profile as JSON."""
        if change.target == "self_profile":
            return (await self.update_self_profile(user_id, change.changes)).model_dump()
        if not change.person_id:
            raise BadRequestError("a person change needs person_id")
        return (await self.update_person(user_id, change.person_id, change.changes)).model_dump()

    # -- proposals ------------------------------------------------------------------------------

    async def _proposals(self, user_id: str) -> list[Proposal]:
        return [Proposal.model_validate(doc) for doc in await self.store.list(user_id, PROPOSALS)]

    async def list_proposals(self, user_id: str, status: str | None = "pending") -> list[Proposal]:
        return [p for p in await self._proposals(user_id) if status is None or p.status == status]

    async def propose(
        self, user_id: str, changes: Sequence[ProposalChange], *, session_id: str | None = None
    ) -> list[Proposal]:
        """File new pending proposals; a change already pending, accepted or ever rejected is
        skipped (a redelivered job, or the same fact said again, files nothing twice)."""
        existing = await self._proposals(user_id)
        blocked = {p.fingerprint() for p in existing}
        pending = sum(1 for p in existing if p.status == "pending")
        filed: list[Proposal] = []
        for change in changes:
            fingerprint = change.fingerprint()
            if fingerprint in blocked or pending >= MAX_PENDING_PROPOSALS:
                continue
            if not await self._applicable(user_id, change):
                continue
            proposal = Proposal(
                **change.model_dump(),
                id=uuid.uuid4().hex,
                session_id=session_id,
                created_at=self._clock(),
            )
            await self.store.put(user_id, PROPOSALS, proposal.id, proposal.model_dump())
            blocked.add(fingerprint)
            pending += 1
            filed.append(proposal)
        return filed

    async def _applicable(self, user_id: str, change: ProposalChange) -> bool:
        """Whether applying `change` would validate (a proposal the user cannot accept is noise)."""
        if change.target == "self_profile":
            current: BaseModel = await self.get_self_profile(user_id)
            fields: type[BaseModel] = SelfProfileFields
        else:
            person = await self.find_person(user_id, change.person_id or "")
            if person is None:
                return False
            current, fields = person, PersonFields
        merged = current.model_dump(include=set(fields.model_fields)) | change.changes
        try:
            fields.model_validate(merged)
        except ValidationError:
            return False
        return True

    async def decide(self, user_id: str, proposal_id: str, *, accept: bool) -> Proposal:
        """Accept (apply) or reject a pending proposal."""
        doc = await self.store.get(user_id, PROPOSALS, proposal_id)
        if doc is None:
            raise NotFoundError(f"proposal {proposal_id!r} not found")
        proposal = Proposal.model_validate(doc)
        if proposal.status != "pending":
            raise BadRequestError(f"proposal {proposal_id!r} is already {proposal.status}")
        if accept:
            await self.apply_change(user_id, proposal)
        decided = proposal.model_copy(
            update={"status": "accepted" if accept else "rejected", "decided_at": self._clock()}
        )
        await self.store.put(user_id, PROPOSALS, decided.id, decided.model_dump())
        return decided
