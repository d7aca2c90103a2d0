"""A resent message is stored once (issue 14, item 3): the client's message id is recorded in the
committed turn, and a resend of a committed message gets the committed reply without a model
call. On the embedded store, through HTTP; the Firestore faults that make clients resend are in
tests/e2e/test_commit_faults.py."""

from __future__ import annotations

import httpx
from google.adk.models import LlmRequest

from tests.support.scripted_model import ScriptedLlm
from tests.support.sse import of_type, parse_frames, streamed_text

ALICE = {"X-User-Id": "alice"}
EXTRACTOR = "CONFIDANT_EXTRACTOR"  # the post-turn jobs' model calls (in-process here)


def _coach(*replies: str) -> ScriptedLlm:
    """The coach's replies in order; the post-turn extractors get an empty answer."""
    queue = list(replies)

    def answer(request: LlmRequest) -> str:
        return "{}" if _is_extractor(request) else queue.pop(0)

    return ScriptedLlm(script=[answer] * 50)


def _is_extractor(request: LlmRequest) -> bool:
    return EXTRACTOR in str(request.config.system_instruction or "")


def _coach_calls(model: ScriptedLlm) -> int:
    return sum(1 for r in model.requests if not _is_extractor(r))


async def _send(client: httpx.AsyncClient, body: dict, **headers: str) -> httpx.Response:
    return await client.post("/v1/chat", json=body, headers=ALICE | headers)


async def _stored_texts(client: httpx.AsyncClient, session_id: str) -> list[str]:
    response = await client.get(f"/v1/sessions/{session_id}", headers=ALICE)
    return [
        part["text"]
        for event in response.json()["events"]
        for part in (event.get("content") or {}).get("parts") or []
        if "text" in part
    ]


def _use_chat(message_id: str, text: str, trigger: str = "submit-message") -> dict:
    return {
        "id": "chat-1",
        "trigger": trigger,
        "messages": [{"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}],
    }


async def test_a_resent_message_id_replays_the_committed_reply(make_client) -> None:
    model = _coach("first reply", "second reply", "third reply")
    client, _ = make_client(model=model)
    body = {"message": "hello there", "session_id": "s", "message_id": "m-1"}
    first, _ = parse_frames((await _send(client, body)).text)
    assert streamed_text(first) == "first reply" and not of_type(first, "data-replay")

    again, done = parse_frames((await _send(client, body)).text)
    assert done and again[-1]["type"] == "finish"
    assert of_type(again, "data-replay")[0]["data"] == {"messageId": "m-1"}
    assert streamed_text(again) == "first reply"
    as_json = await _send(client, body, accept="application/json")
    assert as_json.json()["text"] == "first reply"
    assert _coach_calls(model) == 1  # the resends called no model
    assert await _stored_texts(client, "s") == ["hello there", "first reply"]

    # Without an id, or with a new one, the same text is a new message.
    parts, _ = parse_frames(
        (await _send(client, {"message": "hello there", "session_id": "s"})).text
    )
    assert streamed_text(parts) == "second reply"
    assert _coach_calls(model) == 2


async def test_the_ai_sdk_message_id_is_the_key_and_regenerate_is_a_new_turn(make_client) -> None:
    model = _coach("one", "two")
    client, _ = make_client(model=model)
    await _send(client, _use_chat("u-1", "hi"))
    resent, _ = parse_frames((await _send(client, _use_chat("u-1", "hi"))).text)
    assert of_type(resent, "data-replay") and streamed_text(resent) == "one"
    # regenerate asks for another reply to the same message: a fresh turn, not a replay.
    regenerated, _ = parse_frames(
        (await _send(client, _use_chat("u-1", "hi", "regenerate-message"))).text
    )
    assert not of_type(regenerated, "data-replay") and streamed_text(regenerated) == "two"
    assert _coach_calls(model) == 2


async def test_a_message_id_names_one_message(make_client) -> None:
    client, _ = make_client(model=_coach("ok"))
    await _send(client, {"message": "first", "session_id": "s", "message_id": "m-1"})
    reused = await _send(client, {"message": "other", "session_id": "s", "message_id": "m-1"})
    assert reused.status_code == 400 and "already used" in reused.json()["error"]["message"]
    bad = await _send(client, {"message": "x", "session_id": "s", "message_id": "a b"})
    assert bad.status_code == 400 and "message_id" in bad.json()["error"]["message"]
    # The refused requests left the session free and unchanged.
    assert await _stored_texts(client, "s") == ["first", "ok"]


async def test_a_resent_answer_to_a_paused_run_replays_its_reply(make_client) -> None:
    # An answer that resumes a paused run is stored as the call's function response, not as
    # text; its resend must still be recognised as the same message, not refused as another.
    from tests.support.taskflow import APP, DETAILS, INPUT_NEEDED, REQUEST, as_turn, body

    client, _ = make_client()
    asked = as_turn(await _send(client, body("w", REQUEST) | {"message_id": "m-1"}))
    call_id = asked.one(INPUT_NEEDED)["callId"]
    answer = body("w", DETAILS, call_id=call_id) | {"message_id": "m-2"}
    answered = as_turn(await _send(client, answer))
    assert answered.status == 200 and answered.done, answered.body
    stored = await client.get(f"/v1/sessions/w?app={APP}", headers=ALICE)
    events = len(stored.json()["events"])

    again = as_turn(await _send(client, answer))
    assert again.status == 200, again.body
    assert again.one("data-replay") == {"messageId": "m-2"}
    assert again.text == answered.text
    stored = await client.get(f"/v1/sessions/w?app={APP}", headers=ALICE)
    assert len(stored.json()["events"]) == events  # nothing stored twice


async def test_a_resent_message_whose_run_paused_says_again_what_it_waits_for(make_client) -> None:
    # A client resends after `commit_outcome_unknown`; the turn was stored and paused. The
    # replay must ask the question again, or the page shows no prompt and the run waits forever.
    from tests.support.taskflow import APP, INPUT_NEEDED, REQUEST, as_turn, body

    client, _ = make_client()
    sent = body("p", REQUEST) | {"message_id": "m-1"}
    asked = as_turn(await _send(client, sent))
    question = of_type(asked.parts, INPUT_NEEDED)
    assert question and not of_type(asked.parts, "data-replay")

    again = as_turn(await _send(client, sent))
    assert again.one("data-replay") == {"messageId": "m-1"}
    assert of_type(again.parts, INPUT_NEEDED) == question
    assert again.kinds()[-1] == "finish"
    as_json = await _send(client, sent, accept="application/json")
    assert as_json.json()["pauses"] == question
    stored = await client.get(f"/v1/sessions/p?app={APP}", headers=ALICE)
    assert stored.json()["pauses"] == question  # the same question the session waits on
