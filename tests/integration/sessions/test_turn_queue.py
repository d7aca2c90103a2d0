"""The line of waiting messages and the interrupt request, on both stores (SQLite file,
Firestore emulator): arrival order, expiry, leaving, and that neither touches the session
document (its update time is the running turn's lease token)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime

from confidant.sessions.firestore_store import FirestoreSessionStore, session_ref
from confidant.sessions.firestore_turn_queue import TURN_QUEUE, FirestoreTurnQueue
from confidant.sessions.records import SessionKey
from confidant.sessions.service import ConfidantSessionService
from confidant.sessions.sqlite_turn_queue import SqliteTurnQueue
from confidant.sessions.turn_queue import TurnQueue
from tests.support import stores


def _queue(store) -> TurnQueue:  # type: ignore[no-untyped-def]
    if isinstance(store, FirestoreSessionStore):
        return FirestoreTurnQueue(store.client)
    return SqliteTurnQueue(store)


def _key() -> SessionKey:
    return SessionKey(f"q-{uuid.uuid4().hex[:8]}", "turns", "line")


async def test_tickets_are_served_in_arrival_order_and_leave_cleanly(store) -> None:
    queue, key, other = _queue(store), _key(), _key()
    for ticket in ("first", "second", "third"):
        await queue.join(key, f"{key.user_id}-{ticket}", now=100.0, ttl_s=30)
    await queue.join(other, f"{other.user_id}-elsewhere", now=100.0, ttl_s=30)
    names = [t.split("-", 2)[-1] for t in await queue.line(key, now=101.0)]
    assert names == ["first", "second", "third"]
    await queue.leave(key, f"{key.user_id}-first")
    names = [t.split("-", 2)[-1] for t in await queue.line(key, now=101.0)]
    assert names == ["second", "third"]
    assert len(await queue.line(other, now=101.0)) == 1  # another session's line is its own


async def test_concurrent_joins_get_one_place_each(store) -> None:
    queue, key = _queue(store), _key()
    tickets = [f"t{i}" + uuid.uuid4().hex for i in range(12)]
    await asyncio.gather(*(queue.join(key, t, now=100.0, ttl_s=30) for t in tickets))
    line = await queue.line(key, now=100.0)
    assert sorted(line) == sorted(tickets)  # every ticket once, none lost


async def test_an_expired_ticket_stops_counting_and_refresh_keeps_one_alive(store) -> None:
    queue, key = _queue(store), _key()
    await queue.join(key, "dead" + key.user_id, now=100.0, ttl_s=5)
    await queue.join(key, "live" + key.user_id, now=100.0, ttl_s=5)
    await queue.refresh(key, "live" + key.user_id, now=104.0, ttl_s=5)
    assert await queue.line(key, now=106.0) == ["live" + key.user_id]
    assert await queue.line(key, now=110.0) == []


async def test_interrupt_requests_name_a_holder_and_leave_the_lease_token_alone(store) -> None:
    sessions = ConfidantSessionService(store)
    queue, key = _queue(store), _key()
    turn = await sessions.begin_turn(key, ttl_s=30)
    assert await queue.interrupt_requested(key) is None
    await queue.join(key, "waiting" + key.user_id, now=sessions.clock(), ttl_s=30)
    await queue.request_interrupt(key, turn.holder)
    assert await queue.interrupt_requested(key) == turn.holder
    # The running turn still commits and renews: the queue never wrote its session document.
    assert await store.renew_turn(
        key, holder=turn.holder, now=sessions.clock(), ttl_s=30, token=turn.lease_token
    )
    await queue.clear_interrupt(key)
    assert await queue.interrupt_requested(key) is None


async def test_deleting_the_session_or_user_removes_its_line(store) -> None:
    sessions = ConfidantSessionService(store)
    queue, key = _queue(store), _key()
    turn = await sessions.begin_turn(key, ttl_s=30)
    await turn.commit()
    await queue.join(key, "t" + key.user_id, now=sessions.clock(), ttl_s=30)
    await queue.request_interrupt(key, "someone")
    await store.delete_session(key)
    assert await queue.line(key, now=sessions.clock()) == []
    assert await queue.interrupt_requested(key) is None


async def test_a_ticket_that_expired_joins_again_at_the_end_of_the_line(store) -> None:
    # A waiting request whose process stalled past its ticket's TTL joins again (busy.py): it
    # must get a place at the end, not fail on its own stale ticket.
    queue, key = _queue(store), _key()
    stalled, other = "stalled" + key.user_id, "other" + key.user_id
    await queue.join(key, stalled, now=100.0, ttl_s=5)
    await queue.join(key, other, now=100.0, ttl_s=30)
    assert await queue.line(key, now=106.0) == [other]
    await queue.join(key, stalled, now=106.0, ttl_s=5)
    assert await queue.line(key, now=107.0) == [other, stalled]


async def test_a_firestore_ticket_carries_its_ttl_from_when_it_stops_counting(request) -> None:
    # Firestore's TTL policy (infra firestore.tf) deletes the tickets of waiters that died.
    request.getfixturevalue("firestore_emulator")
    async with stores.firestore_store() as store:
        client = store.client  # type: ignore[attr-defined]
        queue, key = FirestoreTurnQueue(client), _key()
        ticket = "ttl" + key.user_id
        ref = session_ref(client, key).collection(TURN_QUEUE).document(ticket)
        await queue.join(key, ticket, now=1_000.0, ttl_s=30)
        assert (await ref.get()).get("expire_at") == datetime.fromtimestamp(1_030, UTC)
        await queue.refresh(key, ticket, now=1_020.0, ttl_s=30)
        assert (await ref.get()).get("expire_at") == datetime.fromtimestamp(1_050, UTC)
