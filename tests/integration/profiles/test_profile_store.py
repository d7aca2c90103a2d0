"""The profile adapters: one document, field-level writes, atomic turns, concurrent writers."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path

import pytest

from confidant.errors import StaleTurnError
from confidant.profiles import AppendOp, MergeOp, SetOp
from confidant.sessions.records import SessionKey
from confidant.sessions.service import ConfidantSessionService
from tests.support.stores import emulator_client

REPO = Path(__file__).resolve().parents[3]
SKILL = ("skills", "lifecoach")


def _user() -> str:
    return f"u-{uuid.uuid4().hex[:10]}"


async def test_update_merges_appends_and_deletes_and_load_reads_it_back(store) -> None:
    user = _user()
    assert await store.load_profile(user) == {}
    await store.update_profile(
        user,
        [
            MergeOp((*SKILL, "goals"), {"year": {"a": 1, "b": 2}, "list": [1, 2]}),
            MergeOp(("preferences",), {"language": "zh"}),
        ],
    )
    await store.update_profile(
        user,
        [
            MergeOp((*SKILL, "goals"), {"year": {"a": None}, "list": [3]}),
            AppendOp((*SKILL, "journal"), {"t": "first"}, 2),
            AppendOp((*SKILL, "journal"), {"t": "second"}, 2),
            AppendOp((*SKILL, "journal"), {"t": "third"}, 2),
        ],
    )
    profile = await store.load_profile(user)
    assert profile["skills"]["lifecoach"]["goals"] == {"year": {"b": 2}, "list": [3]}
    assert [e["t"] for e in profile["skills"]["lifecoach"]["journal"]] == ["third", "second"]
    assert profile["preferences"] == {"language": "zh"}
    await store.update_profile(user, [SetOp((*SKILL, "goals"), None)])
    assert "goals" not in (await store.load_profile(user))["skills"]["lifecoach"]


async def test_delete_user_removes_the_profile(store) -> None:
    user = _user()
    await store.update_profile(user, [MergeOp(("state",), {"focus": ["health"]})])
    assert user in await store.list_profile_users(after=None, limit=1000)
    await store.delete_user(user)
    assert await store.load_profile(user) == {}


async def test_a_turns_profile_writes_commit_with_it_or_not_at_all(store) -> None:
    user = _user()
    service = ConfidantSessionService(store)
    key = SessionKey(user, "lifecoach", "s1")
    async with service.turn(key, ttl_s=30) as turn:
        await turn.commit(profile_ops=[MergeOp((*SKILL, "goals"), {"a": 1})])
    assert (await store.load_profile(user))["skills"]["lifecoach"]["goals"] == {"a": 1}

    stale = await service.begin_turn(key, ttl_s=30)
    await service.release(stale)  # its lease is lost, and another turn commits meanwhile
    async with service.turn(key, ttl_s=30) as winner:
        await winner.commit()
    with pytest.raises(StaleTurnError):
        await stale.commit(profile_ops=[MergeOp((*SKILL, "goals"), {"lost": True})])
    assert (await store.load_profile(user))["skills"]["lifecoach"]["goals"] == {"a": 1}


async def test_a_commit_on_a_stale_profile_version_reads_again_and_loses_nothing(store) -> None:
    user = _user()
    service = ConfidantSessionService(store)
    for n, section in enumerate(("first", "second")):  # a new profile, then an existing one
        key = SessionKey(user, "lifecoach", f"s{n}")
        async with service.turn(key, ttl_s=30) as turn:
            version = await store.load_profile_version(user)
            # Another writer changes the profile after this turn read it.
            await store.update_profile(user, [AppendOp((*SKILL, "journal"), {"other": n}, 10)])
            await turn.commit(
                profile_ops=[
                    AppendOp((*SKILL, "journal"), {"turn": n}, 10),
                    MergeOp((*SKILL, section), {"n": n}),
                ],
                profile_version=version,
            )
    coach = (await store.load_profile(user))["skills"]["lifecoach"]
    assert coach["journal"] == [{"turn": 1}, {"other": 1}, {"turn": 0}, {"other": 0}]
    assert coach["first"] == {"n": 0} and coach["second"] == {"n": 1}


async def test_a_commit_on_a_current_version_writes_the_profile(store) -> None:
    user = _user()
    service = ConfidantSessionService(store)
    for n in range(2):
        async with service.turn(SessionKey(user, "lifecoach", "s"), ttl_s=30) as turn:
            version = await store.load_profile_version(user)
            await turn.commit(
                profile_ops=[MergeOp((*SKILL, "goals"), {f"g{n}": n, "gone": None if n else 1})],
                profile_version=version,
            )
    assert (await store.load_profile(user))["skills"]["lifecoach"]["goals"] == {"g0": 0, "g1": 1}


def _writer(backend: str, user: str, name: str, turns: int, path: str = "") -> asyncio.Future:  # type: ignore[type-arg]
    return asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.integration.profiles.writer",
        backend,
        user,
        name,
        str(turns),
        path,
        cwd=REPO,
        env=dict(os.environ),
    )


@pytest.mark.emulator
async def test_two_processes_writing_one_profile_lose_nothing(firestore_emulator, tmp_path) -> None:
    """Two processes commit turns on the same user's profile at the same time: every journal
    append and both writers' own sections survive (Firestore emulator)."""
    user, turns = _user(), 6
    procs = await asyncio.gather(*(_writer("firestore", user, name, turns) for name in ("a", "b")))
    codes = await asyncio.gather(*(p.wait() for p in procs))
    assert codes == [0, 0]
    from confidant.sessions.firestore_store import FirestoreSessionStore

    profile = await FirestoreSessionStore(emulator_client()).load_profile(user)
    coach = profile["skills"]["lifecoach"]
    entries = {(e["writer"], e["n"]) for e in coach["journal"]}
    assert entries == {(w, n) for w in "ab" for n in range(turns)}
    assert coach["section_a"] == {f"k{n}": n for n in range(turns)}
    assert coach["section_b"] == {f"k{n}": n for n in range(turns)}


async def test_two_processes_on_the_embedded_store_lose_nothing(tmp_path) -> None:
    user, turns, path = _user(), 5, str(tmp_path / "shared.db")
    procs = await asyncio.gather(
        *(_writer("sqlite", user, name, turns, path) for name in ("a", "b"))
    )
    assert await asyncio.gather(*(p.wait() for p in procs)) == [0, 0]
    from confidant.sessions.sqlite_store import SqliteSessionStore

    store = SqliteSessionStore(path)
    coach = (await store.load_profile(user))["skills"]["lifecoach"]
    await store.close()
    assert len(coach["journal"]) == 2 * turns
    assert len(coach["section_a"]) == len(coach["section_b"]) == turns
