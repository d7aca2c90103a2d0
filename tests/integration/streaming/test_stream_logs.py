"""The stream log adapters against their real stores: SQLite, and Firestore on the emulator."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from confidant.ports import StreamHead
from confidant.sessions.firestore_store import FirestoreSessionStore, session_ref
from confidant.sessions.records import SessionKey
from confidant.sessions.sqlite_store import SqliteSessionStore
from confidant.streaming.firestore_log import STREAM_PARTS, STREAMS, FirestoreStreamLog
from confidant.streaming.sqlite_log import SqliteStreamLog
from confidant.streaming.stream_log import StreamLogPolicy, StreamRecorder
from tests.support import stores


@pytest.fixture(params=["sqlite", "firestore"])
async def backend(request, tmp_path) -> AsyncIterator[tuple[Any, Any]]:  # type: ignore[no-untyped-def]
    """(stream log, the session store it lives beside)."""
    if request.param == "firestore":
        request.getfixturevalue("firestore_emulator")
        async with stores.firestore_store() as store:
            assert isinstance(store, FirestoreSessionStore)
            yield FirestoreStreamLog(store.client), store
    else:
        async with stores.sqlite_store(tmp_path) as store:
            assert isinstance(store, SqliteSessionStore)
            yield SqliteStreamLog(store), store


def _key() -> SessionKey:
    return SessionKey(f"user-{uuid.uuid4().hex[:8]}", "onemind", uuid.uuid4().hex[:12])


def _head(**fields: Any) -> StreamHead:
    now = time.time()
    return StreamHead(turn_id=uuid.uuid4().hex, started_at=now, expire_at=now + 600, **fields)


async def _batches(log: Any, store: Any, key: SessionKey, turn_id: str) -> int:
    if isinstance(store, FirestoreSessionStore):
        session = session_ref(log.client, key)
        docs = await session.collection(STREAMS).document(turn_id).collection(STREAM_PARTS).get()
        return len(docs)
    async with store.read() as conn:
        async with conn.execute(
            "SELECT COUNT(*) FROM stream_parts WHERE turn_id = ?", (turn_id,)
        ) as cur:
            return (await cur.fetchone())[0]


async def test_batches_are_read_back_in_order_from_any_boundary(backend) -> None:
    log, _ = backend
    key = _key()
    now = time.time()
    head = StreamHead(turn_id="t1", started_at=now, expire_at=now + 600)
    await log.save(key, head, 0, ['{"type":"start"}', '{"a":1}'], write_head=True)
    await log.save(key, head, 2, ['{"b":"two\\nlines"}'], write_head=False)
    assert (await log.latest(key)).status == "active"
    final = head.model_copy(update={"status": "finished", "part_count": 4})
    await log.save(key, final, 3, ['{"type":"finish"}'], write_head=True)

    stored = await log.latest(key)
    # Firestore keeps expire_at as a Timestamp (microseconds); everything else exactly.
    assert stored.model_dump(exclude={"expire_at"}) == final.model_dump(exclude={"expire_at"})
    assert abs(stored.expire_at - final.expire_at) < 1e-5
    assert await log.parts(key, "t1", first=0) == [
        '{"type":"start"}',
        '{"a":1}',
        '{"b":"two\\nlines"}',
        '{"type":"finish"}',
    ]
    assert await log.parts(key, "t1", first=2) == ['{"b":"two\\nlines"}', '{"type":"finish"}']
    assert await log.parts(key, "t1", first=4) == []
    assert await log.latest(_key()) is None


async def test_the_latest_stream_is_the_newest_turn(backend) -> None:
    log, _ = backend
    key = _key()
    now = time.time()
    for turn, started in (("older", now - 5), ("newer", now), ("oldest", now - 9)):
        head = StreamHead(turn_id=turn, started_at=started, expire_at=started + 600)
        await log.save(key, head, 0, ['{"type":"start"}'], write_head=True)
    assert (await log.latest(key)).turn_id == "newer"


async def test_a_recording_costs_a_write_per_interval_not_per_part(backend) -> None:
    log, store = backend
    key = _key()
    recorder = StreamRecorder(log, key, StreamLogPolicy(flush_s=0.05), now=time.time())
    sent = [{"type": "text-delta", "id": "t", "delta": f"w{i} "} for i in range(150)]
    for part in sent:
        recorder.record(part)
        await asyncio.sleep(0.002)  # parts arrive over ~0.3 s, as a model streams them
    recorder.record({"type": "finish"})
    recorder.end()
    await asyncio.wait_for(recorder.task, 10)

    head = await log.latest(key)
    assert head.status == "finished" and head.part_count == 151 and not head.truncated
    stored = await log.parts(key, head.turn_id, first=0)
    assert (
        stored[:3]
        == [
            '{"type":"text-delta","id":"t","delta":"w0 "}',
            '{"type":"text-delta","id":"t","delta":"w1 "}',
            '{"type":"text-delta","id":"t","delta":"w2 "}',
        ]
        and len(stored) == 151
    )
    batches = await _batches(log, store, key, head.turn_id)
    assert 2 <= batches <= 30, batches  # batched: far fewer writes than parts


async def test_a_recording_is_bounded_and_says_so(backend) -> None:
    log, _ = backend
    key = _key()
    recorder = StreamRecorder(
        log, key, StreamLogPolicy(flush_s=0.01, max_bytes=200), now=time.time()
    )
    for i in range(20):
        recorder.record({"type": "text-delta", "id": "t", "delta": "x" * 30 + str(i)})
    recorder.record({"type": "finish"})
    recorder.end()
    await asyncio.wait_for(recorder.task, 10)
    head = await log.latest(key)
    stored = await log.parts(key, head.turn_id, first=0)
    assert head.truncated and head.status == "finished"
    assert len(stored) == head.part_count and 0 < len(stored) < 20
    assert sum(len(p.encode()) for p in stored) <= 200


async def test_deleting_the_session_or_the_user_deletes_its_streams(backend) -> None:
    log, store = backend
    key, other = _key(), _key()
    for k in (key, other):
        await store.create_session(k, state={}, app_delta={}, user_delta={}, now=time.time())
        head = StreamHead(turn_id="t", started_at=time.time(), expire_at=time.time() + 600)
        await log.save(k, head, 0, ['{"type":"start"}'], write_head=True)

    assert await store.delete_session(key)
    assert await log.latest(key) is None and await log.parts(key, "t", first=0) == []
    await store.delete_user(other.user_id)
    assert await log.latest(other) is None and await log.parts(other, "t", first=0) == []


async def test_firestore_documents_carry_the_ttl_field(firestore_emulator) -> None:
    async with stores.firestore_store() as store:
        log = FirestoreStreamLog(store.client)  # type: ignore[attr-defined]
        key = _key()
        started = time.time()
        head = StreamHead(turn_id="t", started_at=started, expire_at=started + 600)
        await log.save(key, head, 0, ['{"type":"start"}'], write_head=True)
        streams = session_ref(log.client, key).collection(STREAMS)
        head_doc = (await streams.document("t").get()).to_dict()
        batch_doc = (
            await streams.document("t").collection(STREAM_PARTS).document("00000000").get()
        ).to_dict()
    for doc in (head_doc, batch_doc):
        assert abs(doc["expire_at"].timestamp() - (started + 600)) < 0.01  # a Timestamp
    assert batch_doc["parts"] == '{"type":"start"}' and batch_doc["first"] == 0


async def test_sqlite_drops_expired_rows_when_a_stream_starts(tmp_path) -> None:
    async with stores.sqlite_store(tmp_path) as store:
        log = SqliteStreamLog(store)  # type: ignore[arg-type]
        key = _key()
        old = StreamHead(turn_id="old", started_at=time.time() - 700, expire_at=time.time() - 100)
        await log.save(key, old, 0, ['{"type":"start"}'], write_head=True)
        fresh = StreamHead(turn_id="new", started_at=time.time(), expire_at=time.time() + 600)
        await log.save(_key(), fresh, 0, ['{"type":"start"}'], write_head=True)
        assert await log.latest(key) is None
        assert await log.parts(key, "old", first=0) == []
