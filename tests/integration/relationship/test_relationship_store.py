"""Persons, self-profile and proposals on every backend (SQLite file, Firestore emulator)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from agents.offline import OfflineModel
from agents.relationship.proposals import ProfileProposalExtractor, parse_proposals
from confidant.errors import BadRequestError, NotFoundError
from confidant.relationship.firestore_store import FirestoreRelationshipStore
from confidant.relationship.records import ProposalChange
from confidant.relationship.service import RelationshipService
from confidant.relationship.sqlite_store import SqliteRelationshipStore
from tests.support.stores import emulator_client


@pytest.fixture(params=["sqlite", "firestore"])
async def service(request, tmp_path) -> AsyncIterator[RelationshipService]:  # type: ignore[no-untyped-def]
    if request.param == "firestore":
        request.getfixturevalue("firestore_emulator")
        store = FirestoreRelationshipStore(emulator_client())
    else:
        store = SqliteRelationshipStore(str(tmp_path / "relationship.db"))
    try:
        yield RelationshipService(store)
    finally:
        await store.close()


def _user() -> str:
    return f"u-{uuid.uuid4().hex[:10]}"  # the emulator is shared by every test


async def test_persons_round_trip_per_user(service: RelationshipService) -> None:
    alice, bob = _user(), _user()
    first = await service.create_person(alice, {"name": "Alex", "tags": ["direct"]})
    second = await service.create_person(alice, {"name": "Sam", "relationship": "sister"})
    assert [p.name for p in await service.list_persons(alice)] == ["Alex", "Sam"]
    assert await service.list_persons(bob) == []
    with pytest.raises(NotFoundError):
        await service.get_person(bob, first.id)
    updated = await service.update_person(alice, second.id, {"status": "moving abroad"})
    assert updated.relationship == "sister" and updated.status == "moving abroad"
    assert (await service.get_person(alice, second.id)).status == "moving abroad"
    with pytest.raises(BadRequestError, match="notes"):
        await service.update_person(alice, second.id, {"notes": "n" * 2001})
    await service.delete_person(alice, first.id)
    with pytest.raises(NotFoundError):
        await service.delete_person(alice, first.id)
    assert [p.id for p in await service.list_persons(alice)] == [second.id]


async def test_self_profile_round_trip(service: RelationshipService) -> None:
    user = _user()
    assert (await service.get_self_profile(user)).is_empty()
    await service.replace_self_profile(user, {"about": "nurse", "values": ["honesty"]})
    merged = await service.update_self_profile(user, {"goals": "fewer fights"})
    assert merged.about == "nurse" and merged.goals == "fewer fights"
    assert (await service.get_self_profile(user)).values == ["honesty"]


async def test_rejected_proposals_are_never_proposed_again_verbatim(
    service: RelationshipService,
) -> None:
    user = _user()
    person = await service.create_person(user, {"name": "Alex"})
    introvert = ProposalChange(target="self_profile", changes={"about": "introvert"})
    notes = ProposalChange(target="person", person_id=person.id, changes={"notes": "shy"})
    unknown_field = ProposalChange(target="self_profile", changes={"age": 3})
    missing_person = ProposalChange(target="person", person_id="gone", changes={"notes": "x"})
    filed = await service.propose(
        user, [introvert, notes, unknown_field, missing_person], session_id="s1"
    )
    assert [p.changes for p in filed] == [{"about": "introvert"}, {"notes": "shy"}]
    assert await service.propose(user, [introvert]) == []  # already pending

    rejected = await service.decide(user, filed[0].id, accept=False)
    assert rejected.status == "rejected"
    assert await service.propose(user, [introvert]) == []  # never again verbatim
    other = ProposalChange(target="self_profile", changes={"about": "ambivert"})
    assert len(await service.propose(user, [other])) == 1  # a different change is welcome

    accepted = await service.decide(user, filed[1].id, accept=True)
    assert accepted.status == "accepted"
    assert (await service.get_person(user, person.id)).notes == "shy"
    with pytest.raises(BadRequestError, match="already accepted"):
        await service.decide(user, filed[1].id, accept=True)
    with pytest.raises(NotFoundError):
        await service.decide(user, "nope", accept=True)
    pending = await service.list_proposals(user)
    assert [p.changes for p in pending] == [{"about": "ambivert"}]
    assert len(await service.list_proposals(user, None)) == 3


async def test_the_extractor_files_proposals_from_what_the_user_said(
    service: RelationshipService,
) -> None:
    user = _user()
    extractor = ProfileProposalExtractor(OfflineModel(), service)
    conversation = "user: I am a night-shift nurse. He never calls.\ncoach: I am here for you."
    [proposal] = await extractor.propose(user_id=user, conversation=conversation, session_id="s")
    assert proposal.changes == {"about": "I am a night-shift nurse"}
    assert proposal.session_id == "s" and proposal.status == "pending"
    await service.decide(user, proposal.id, accept=False)
    assert await extractor.propose(user_id=user, conversation=conversation) == []


def test_parse_proposals_keeps_only_valid_changes() -> None:
    text = (
        '```json\n{"proposals": [{"target": "self_profile", "changes": {"goals": "calm"}},'
        ' {"target": "person", "changes": {"notes": "x"}}, {"target": "boss"}, "junk"]}\n```'
    )
    assert [c.changes for c in parse_proposals(text, None)] == [{"goals": "calm"}]
    assert [c.person_id for c in parse_proposals(text, "p1")] == [None, "p1"]
    assert parse_proposals("not json", None) == []


async def test_delete_user_erases_every_document(service: RelationshipService) -> None:
    user, other = _user(), _user()
    await service.create_person(user, {"name": "Alex"})
    await service.replace_self_profile(user, {"about": "nurse"})
    await service.propose(user, [ProposalChange(target="self_profile", changes={"goals": "x"})])
    kept = await service.create_person(other, {"name": "Sam"})
    assert await service.store.delete_user(user) == 3
    assert await service.list_persons(user) == []
    assert (await service.get_self_profile(user)).is_empty()
    assert await service.list_proposals(user, None) == []
    assert [p.id for p in await service.list_persons(other)] == [kept.id]
