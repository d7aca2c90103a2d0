"""The caller's memories, emotions and session summary over HTTP; the embedded default runs the
post-turn jobs in process after each reply (same job service as the Pub/Sub target)."""

from __future__ import annotations

import asyncio

import httpx

from confidant.bootstrap import Runtime
from confidant.jobs.sqlite_store import SqliteJobStore
from tests.support.job_runtime import RecordingBus

ALICE = {"X-User-Id": "alice"}
BOB = {"X-User-Id": "bob"}


async def _turn(
    client: httpx.AsyncClient,
    runtime: Runtime,
    message: str,
    sid: str = "s1",
    headers: dict[str, str] = ALICE,
) -> None:
    response = await client.post(
        "/v1/chat", json={"message": message, "session_id": sid}, headers=headers
    )
    assert response.status_code == 200
    await runtime.jobs.drain()  # the in-process bus ran the turn's jobs after the reply


async def test_a_conversation_builds_memories_emotions_and_a_summary(make_client) -> None:
    client, runtime = make_client()
    await _turn(client, runtime, "I am a teacher and I feel stuck")
    await _turn(client, runtime, "My brother is angry with me and I am sad")
    await _turn(client, runtime, "I have nothing else to add", headers=BOB)

    emotions = (await client.get("/v1/me/emotions?app=onemind", headers=ALICE)).json()
    assert [e["user_mood"] for e in emotions["emotions"]] == ["stuck", "sad"]
    assert emotions["emotions"][1]["other_mood"] == "angry"
    assert {e["session_id"] for e in emotions["emotions"]} == {"s1"}
    only_other = await client.get("/v1/me/emotions?session_id=other", headers=ALICE)
    assert only_other.json() == {"emotions": []}

    memories = (await client.get("/v1/me/memories", headers=ALICE)).json()["memories"]
    assert sorted(m["text"] for m in memories) == [
        "I am a teacher and I feel stuck",
        "My brother is angry with me and I am sad",
    ]
    assert all("embedding" not in m for m in memories)
    bob = (await client.get("/v1/me/memories", headers=BOB)).json()["memories"]
    assert [m["text"] for m in bob] == ["I have nothing else to add"]

    session = (await client.get("/v1/sessions/s1", headers=ALICE)).json()["session"]
    assert session["summary"]["covers_seq"] == session["event_count"] - 1  # the latest event
    assert "teacher" in session["summary"]["text"] and "brother" in session["summary"]["text"]

    forget = memories[0]["id"]
    assert (await client.delete(f"/v1/me/memories/{forget}", headers=ALICE)).status_code == 204
    assert (await client.delete(f"/v1/me/memories/{forget}", headers=ALICE)).status_code == 404
    assert (await client.delete(f"/v1/me/memories/{forget}", headers=BOB)).status_code == 404
    left = (await client.get("/v1/me/memories", headers=ALICE)).json()["memories"]
    assert [m["id"] for m in left] == [memories[1]["id"]]

    assert (await client.delete("/v1/me", headers=ALICE)).status_code == 200
    assert (await client.get("/v1/me/memories", headers=ALICE)).json() == {"memories": []}
    assert (await client.get("/v1/me/emotions", headers=ALICE)).json() == {"emotions": []}
    assert await runtime.job_store.summary("alice", "onemind", "s1") is None
    assert len((await client.get("/v1/me/memories", headers=BOB)).json()["memories"]) == 1


async def test_bad_requests_get_a_reason(make_client) -> None:
    client, _ = make_client()
    bad_limit = await client.get("/v1/me/memories?limit=0", headers=ALICE)
    assert bad_limit.status_code == 400 and "limit" in bad_limit.json()["error"]["message"]
    bad_session = await client.get("/v1/me/emotions?session_id=../x", headers=ALICE)
    assert bad_session.status_code == 400
    assert (await client.post("/v1/me/memories", headers=ALICE)).status_code == 405
    assert (await client.get("/v1/me/nothing", headers=ALICE)).status_code == 404
    assert (await client.get("/v1/me/memories")).status_code == 401


async def test_jobs_left_by_a_failed_publish_are_swept_at_start(make_client) -> None:
    client, runtime = make_client()
    bus = RecordingBus()
    bus.down = True
    runtime.chat.jobs = bus  # publishing fails: the turn still succeeds
    response = await client.post(
        "/v1/chat", json={"message": "I have a cat", "session_id": "s1"}, headers=ALICE
    )
    assert response.status_code == 200
    assert await runtime.store.list_memories("alice") == []

    # The next process on the same file sweeps at start (grace 0 here) and runs the jobs.
    _, restarted = make_client(sweep_grace_s=0, sweep_interval_s=3600)
    restarted.start_sweeper()
    assert isinstance(restarted.job_store, SqliteJobStore)
    for _ in range(100):
        await restarted.jobs.drain()
        if await restarted.store.list_memories("alice"):
            break
        await asyncio.sleep(0.05)
    assert [m.text for m in await restarted.store.list_memories("alice")] == ["I have a cat"]
    assert await restarted.job_store.due_jobs(created_before=1e12, limit=10) == []
