"""The deployed shape, end to end: functions-framework + Firestore and Pub/Sub emulators +
Firebase ID tokens, a real HTTP client reading the SSE stream."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore

from tests.conftest import TEST_PROJECT
from tests.support.sse import of_type, parse_frames, streamed_text

CONVERSATION_EN = [
    "I keep putting off my thesis and I feel stuck",
    "I'm afraid it won't be good enough",
    "Maybe both parts of me want the work to matter",
    "I will write one rough paragraph tomorrow at nine",
    "I learned that starting small quiets the fear",
]


def _firestore() -> firestore.Client:
    return firestore.Client(project=TEST_PROJECT, credentials=AnonymousCredentials())


async def _say(client: httpx.AsyncClient, token: str, session_id: str, text: str) -> list[dict]:
    async with client.stream(
        "POST",
        "/v1/chat",
        json={"message": text, "session_id": session_id},
        headers={"Authorization": f"Bearer {token}"},
    ) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
        body = "".join([chunk async for chunk in response.aiter_text()])
    parts, done = parse_frames(body)
    assert done, body
    return parts


async def test_four_stage_conversation_and_crisis_end_to_end(cloud_server, token_issuer) -> None:
    server = cloud_server()
    uid = f"e2e-{uuid.uuid4().hex[:8]}"
    token = token_issuer.issue(uid)
    sid = "journey"
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        stages, tools = [], []
        for text in CONVERSATION_EN:
            parts = await _say(client, token, sid, text)
            assert parts[-1]["type"] == "finish", parts
            assert streamed_text(parts).strip()
            stages += [p["data"]["phase"] for p in of_type(parts, "data-protocol-progress")]
            tools += [p["toolName"] for p in of_type(parts, "tool-input-available")]
        assert stages == ["stage_2_integration", "stage_3_micro_action", "stage_4_solidification"]
        assert tools == [
            "advance_stage",
            "retrieve_wisdom",
            "advance_stage",
            "advance_stage",
            "save_crystal",
        ]

        crisis = await _say(client, token, "crisis", "sometimes I want to end my life")
        assert "988" in streamed_text(crisis)
        assert not of_type(crisis, "tool-input-available")

        # The session and its events through the API.
        got = (
            await client.get(f"/v1/sessions/{sid}", headers={"Authorization": f"Bearer {token}"})
        ).json()
        assert got["session"]["state"]["current_stage"] == "stage_4_solidification"
        user_texts = [
            e["content"]["parts"][0]["text"] for e in got["events"] if e["author"] == "user"
        ]
        assert user_texts == CONVERSATION_EN

        # Another user's token cannot see it.
        stranger = token_issuer.issue(f"stranger-{uuid.uuid4().hex[:6]}")
        response = await client.get(
            f"/v1/sessions/{sid}", headers={"Authorization": f"Bearer {stranger}"}
        )
        assert response.status_code == 404
        bad = await client.get("/v1/sessions", headers={"Authorization": "Bearer not-a-token"})
        assert bad.status_code == 401

    # Read back from Firestore directly: the session document and the crystal.
    db = _firestore()
    session_doc = db.document(f"users/{uid}/apps/onemind/sessions/{sid}").get().to_dict()
    assert json.loads(session_doc["state"])["current_stage"] == "stage_4_solidification"
    assert session_doc["lease_holder"] is None
    tail = json.loads(session_doc["tail"])
    assert [e["seq"] for e in tail] == list(range(len(tail)))
    crystals = [d.to_dict() for d in db.collection(f"users/{uid}/memories").stream()]
    assert len(crystals) == 1
    crystal = crystals[0]
    assert crystal["kind"] == "integration_crystal"
    data = json.loads(crystal["data"])
    assert data["name"] and data["insight"]
    assert set(data["stages"]) >= {
        "stage_1_awareness",
        "stage_2_integration",
        "stage_3_micro_action",
    }
    crisis_doc = db.document(f"users/{uid}/apps/onemind/sessions/crisis").get().to_dict()
    assert len(json.loads(crisis_doc["tail"])) == 2

    # A later session of the same user is built on the crystal.
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        await _say(client, token, "later", "hello again")
        erase = await client.delete("/v1/me", headers={"Authorization": f"Bearer {token}"})
        assert erase.status_code == 200
    assert not list(db.collection(f"users/{uid}/memories").stream())
    assert not db.document(f"users/{uid}/apps/onemind/sessions/{sid}").get().exists


async def test_two_processes_one_session_never_interleave(cloud_server, token_issuer) -> None:
    slow = {"CONFIDANT_OFFLINE_CHUNK_DELAY_MS": "250"}
    first_server, second_server = cloud_server(**slow), cloud_server(**slow)
    uid = f"busy-{uuid.uuid4().hex[:8]}"
    headers = {"Authorization": f"Bearer {token_issuer.issue(uid)}"}
    sid = "shared"
    async with (
        httpx.AsyncClient(base_url=first_server.base_url, timeout=30) as first,
        httpx.AsyncClient(base_url=second_server.base_url, timeout=30) as second,
    ):
        async with first.stream(
            "POST", "/v1/chat", json={"message": "one", "session_id": sid}, headers=headers
        ) as streaming:
            assert streaming.status_code == 200
            stream_iter = streaming.aiter_text()
            await anext(stream_iter)  # the turn has started on process 1
            busy = await second.post(
                "/v1/chat", json={"message": "two", "session_id": sid}, headers=headers
            )
            assert busy.status_code == 409
            assert "still being answered" in busy.json()["error"]["message"]
            rest = "".join([chunk async for chunk in stream_iter])
            assert "data: [DONE]" in rest
        # Once the first turn is committed, process 2 takes the next message.
        parts = await _say(second, headers["Authorization"].split()[1], sid, "two")
        assert parts[-1]["type"] == "finish"
        # The "wait" policy queues instead of rejecting, across processes too.
        token = headers["Authorization"].split()[1]
        waiting = [cloud_server(CONFIDANT_BUSY_POLICY="wait", **slow) for _ in range(2)]
        async with (
            httpx.AsyncClient(base_url=waiting[0].base_url, timeout=60) as third,
            httpx.AsyncClient(base_url=waiting[1].base_url, timeout=60) as fourth,
        ):
            results = await asyncio.gather(
                _say(third, token, sid, "three"), _say(fourth, token, sid, "four")
            )
        assert all(r[-1]["type"] == "finish" for r in results)
        page = (
            await first.get(f"/v1/sessions/{sid}", params={"page_size": "200"}, headers=headers)
        ).json()
    authors = [e["author"] for e in page["events"]]
    user_texts = [e["content"]["parts"][0]["text"] for e in page["events"] if e["author"] == "user"]
    assert user_texts[:2] == ["one", "two"]
    assert sorted(user_texts[2:]) == ["four", "three"]
    # Turns are whole: every user message is followed by its own reply before the next one.
    for index, author in enumerate(authors):
        if author == "user" and index:
            assert authors[index - 1] != "user"
