"""The crisis guard through the HTTP stream (onemind): the data-crisis part, the stored flag,
the next turn's check-in instruction, and no model call on a crisis turn."""

from __future__ import annotations

from datetime import datetime

import httpx

from agents.safety import CRISIS_STATE_KEY
from agents.safety.followup import CHECK_IN_HEADER
from confidant.sessions.records import SessionKey
from tests.support.scripted_model import ScriptedLlm
from tests.support.sse import of_type, parse_frames, streamed_text

ALICE = {"X-User-Id": "alice"}


async def _stream(client: httpx.AsyncClient, body: dict) -> list[dict]:
    response = await client.post("/v1/chat", json=body, headers=ALICE)
    assert response.status_code == 200
    parts, done = parse_frames(response.text)
    assert done and parts[-1]["type"] == "finish"
    return parts


async def test_a_crisis_turn_streams_helplines_before_the_reply_and_is_stored(make_client) -> None:
    model = ScriptedLlm(script=["Thank you for telling me. How are you feeling right now?"])
    client, runtime = make_client(model=model)

    parts = await _stream(client, {"message": "今晚我就从楼顶跳下去", "session_id": "c1"})
    kinds = [part["type"] for part in parts]
    assert kinds.index("data-crisis") < kinds.index("text-start")
    crisis = of_type(parts, "data-crisis")[0]["data"]
    assert crisis["locale"] == "zh" and "method" in crisis["signals"]
    phones = [resource["phone"] for resource in crisis["resources"]]
    assert phones[:2] == ["400-161-9995", "010-82951332"]
    assert "400-161-9995" in streamed_text(parts)
    assert model.requests == []

    stored = await runtime.store.load(SessionKey("alice", "onemind", "c1"))
    flag = stored.record.state[CRISIS_STATE_KEY]
    assert flag["signals"] == crisis["signals"] and flag["count"] == 1
    assert datetime.fromisoformat(flag["at"]).tzinfo is not None

    # The next ordinary turn reaches the coach, told to check in first.
    parts = await _stream(client, {"message": "我现在好一点了", "session_id": "c1"})
    assert of_type(parts, "data-crisis") == []
    assert len(model.requests) == 1
    instruction = str(model.requests[0].config.system_instruction)
    assert CHECK_IN_HEADER in instruction and flag["at"] in instruction

    # A crisis message again in the same session: the fixed reply again, still no model call.
    parts = await _stream(client, {"message": "我还是不想活了", "session_id": "c1"})
    assert "explicit_intent" in of_type(parts, "data-crisis")[0]["data"]["signals"]
    assert "010-82951332" in streamed_text(parts)
    assert len(model.requests) == 1
    stored = await runtime.store.load(SessionKey("alice", "onemind", "c1"))
    assert stored.record.state[CRISIS_STATE_KEY]["count"] == 2


async def test_the_json_response_carries_the_same_crisis_data(make_client) -> None:
    model = ScriptedLlm(script=["Tell me more about the thesis."])
    client, _ = make_client(model=model)
    headers = {**ALICE, "accept": "application/json"}

    response = await client.post(
        "/v1/chat", json={"message": "everyone would be better off without me"}, headers=headers
    )
    body = response.json()
    assert response.status_code == 200
    assert body["crisis"]["locale"] == "en" and body["crisis"]["signals"] == ["burden"]
    assert body["crisis"]["resources"][0]["phone"] == "988"
    assert "988" in body["text"]

    ordinary = await client.post(
        "/v1/chat", json={"message": "I keep putting off my thesis"}, headers=headers
    )
    assert ordinary.json()["crisis"] is None
    assert len(model.requests) == 1


async def test_look_alikes_reach_the_coach(make_client) -> None:
    model = ScriptedLlm(script=["a", "b", "c"])
    client, _ = make_client(model=model)
    for message in (
        "This exam is killing me lol",
        "笑死我了，这个视频太好笑了",
        "What are the warning signs of suicide in teenagers? It's for my nursing exam",
    ):
        parts = await _stream(client, {"message": message})
        assert of_type(parts, "data-crisis") == []
    assert len(model.requests) == 3
